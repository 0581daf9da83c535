// zstore-torture: crash torture of zstored (see torture_run.h, docs/torture.md).
#include <signal.h>

#include <atomic>
#include <chrono>
#include <iostream>

#include "tools/torture_src/torture_options.h"
#include "tools/torture_src/torture_run.h"

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop = true; }

}  // namespace

int main(int argc, char** argv) {
  using namespace zstore::torture;
  auto parsed = parse_options(argc, argv);
  if (auto* err = std::get_if<std::string>(&parsed)) {
    std::cerr << "zstore-torture: " << *err << "\n" << usage();
    return 2;
  }
  auto options = std::get<TortureOptions>(parsed);
  if (options.help) {
    std::cout << usage();
    return 0;
  }
  if (options.seed == 0) {
    options.seed = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  }
  std::cout << "zstore-torture: " << options.minutes << " min, " << (options.ha ? "HA pair" : "one server")
            << (options.power_cut ? ", kills are power cuts" : "")
            << (options.sync.empty() ? "" : ", --sync " + options.sync) << ", seed " << options.seed << std::endl;
  // SIGINT/SIGTERM end the run after the current cycle, so the servers are
  // killed and their temporary data dirs removed rather than left behind.
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  try {
    return run_torture(options, std::cout, g_stop);
  } catch (const std::exception& e) {
    std::cerr << "zstore-torture: " << e.what() << "\n";
    return 1;
  }
}
