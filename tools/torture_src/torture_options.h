// Command line of zstore-torture:
//   zstore-torture [--minutes N] [--ha] [--seed S]
// parse() returns the options, or an error message (usage error, exit 2).
#pragma once

#include <cstdint>
#include <string>
#include <variant>

namespace zstore::torture {

struct TortureOptions {
  double minutes = 1.0;       // how long to run (fractions allowed)
  bool ha = false;            // a Binary Star pair instead of one server
  std::uint64_t seed = 0;     // drives every random choice; 0: from the clock
  int min_up_ms = 300;        // a kill lands uniformly in [min_up, max_up]
  int max_up_ms = 3000;       // after the writers resumed
  bool wait_synced = false;  // --ha: load only while the passive is synced
  bool help = false;
};

std::variant<TortureOptions, std::string> parse_options(int argc, char** argv);
const char* usage();

}  // namespace zstore::torture
