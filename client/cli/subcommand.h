// A zstore-cli protocol family ("chp", later "dafka", "admin"): main()
// dispatches on the first word and passes the remaining arguments on.
// Each family prints its own --help and returns one of the exit codes below.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace zstore::cli {

inline constexpr int kExitOk = 0;            // done
inline constexpr int kExitFailure = 1;       // the operation failed (no server, time-out, refused)
inline constexpr int kExitUsage = 2;         // bad command line
inline constexpr int kExitNotFound = 3;      // a server answered: the key does not exist (chp get)
inline constexpr int kExitPrecondition = 4;  // a server answered: the precondition did not hold (chp set/del --if-*)
inline constexpr int kExitNoHistory = 5;     // a server answered: its history holds no version of the key (chp history)

struct Subcommand {
  std::string_view name;
  std::string_view summary;                          // one line for the top-level --help
  int (*run)(const std::vector<std::string>& args);  // args after the family word
};

}  // namespace zstore::cli
