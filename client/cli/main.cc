// zstore-cli: command-line client for zstore. The first word picks the
// protocol family; each family (chp_command.h, ...) parses the rest.
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "client/cli/admin_command.h"
#include "client/cli/chp_command.h"
#include "client/cli/dafka_command.h"
#include "client/cli/keygen_command.h"
#include "client/cli/subcommand.h"

namespace {

using zstore::cli::Subcommand;

// Add a family here: {name, one-line summary, entry point}.
constexpr Subcommand kFamilies[] = {
    {"chp", "Clustered Hashmap Protocol (rfc 12): get, set, del, watch, snapshot", zstore::cli::run_chp},
    {"dafka", "Dafka (rfc 46): produce records from stdin, consume them to stdout", zstore::cli::run_dafka},
    {"admin", "a running zstored's HTTP side: health, checkpoint (online backup)", zstore::cli::run_admin},
    {"keygen", "a CURVE key pair as ZeroMQ certificate files NAME.key, NAME.key_secret", zstore::cli::run_keygen},
};

void usage(std::ostream& out) {
  out << "usage: zstore-cli FAMILY [options] COMMAND [ARGS...]\n\nFamilies:\n";
  for (const auto& f : kFamilies) out << "  " << f.name << std::string(10 - f.name.size(), ' ') << f.summary << "\n";
  out << "\nRun 'zstore-cli FAMILY --help' for the commands and options of a family.\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    usage(std::cerr);
    return zstore::cli::kExitUsage;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    usage(std::cout);
    return zstore::cli::kExitOk;
  }
  for (const auto& f : kFamilies) {
    if (args[0] == f.name) return f.run(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  std::cerr << "zstore-cli: unknown family '" << args[0] << "'\n";
  usage(std::cerr);
  return zstore::cli::kExitUsage;
}
