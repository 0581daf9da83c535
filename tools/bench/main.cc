// zstore-bench: measures zstored (CHP, snapshots, Dafka store, replay) and
// the in-process relay it is compared with. See docs/benchmarks.md.
#include <iostream>
#include <stdexcept>

#include "tools/bench/modes.h"
#include "tools/bench/options.h"

int main(int argc, char** argv) {
  using namespace zstore::bench;
  std::optional<Options> options;
  try {
    options = parse_options(std::vector<std::string>(argv + 1, argv + argc), std::cout);
  } catch (const std::invalid_argument& e) {
    std::cerr << "zstore-bench: " << e.what() << " (see --help)\n";
    return 2;
  }
  if (!options) return 0;
  try {
    Report report = run_mode(*options, std::cerr);
    report.print_table(std::cout);
    if (options->json) std::cout << report.json_line() << '\n';
    return 0;
  } catch (const std::invalid_argument& e) {
    std::cerr << "zstore-bench: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "zstore-bench: " << e.what() << '\n';
    return 1;
  }
}
