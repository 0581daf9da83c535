#include "client/cli/keygen_command.h"

#include <boost/program_options.hpp>
#include <iostream>

#include "client/cli/arguments.h"
#include "client/cli/subcommand.h"
#include "security/curve_cert.h"

namespace zstore::cli {
namespace {

namespace po = boost::program_options;

const char* kUsage =
    "usage: zstore-cli keygen NAME [--dir DIR]\n"
    "\n"
    "Writes a new CURVE key pair as ZeroMQ certificates: DIR/NAME.key (public;\n"
    "copy it into the server's --curve-allow directory, or give a server's to\n"
    "clients as --server-key) and DIR/NAME.key_secret (secret, mode 0600; for\n"
    "--curve-cert). DIR defaults to the current directory. NAME: 1-64 of\n"
    "A-Z a-z 0-9 _ . - (no leading '.'); the server names a client by it.\n"
    "Exit status: 0 ok, 1 a file exists or cannot be written, 2 usage error.\n";

}  // namespace

int run_keygen(const std::vector<std::string>& args) {
  std::string dir = ".";
  po::options_description o("Options");
  o.add_options()("help,h", "show this help")("dir,d", po::value(&dir), "directory for the files");
  po::variables_map vm;
  try {
    vm = parse_command_line(args, o);
  } catch (const UsageError& e) {
    return usage_error("keygen", e.what());
  }
  if (vm.count("help")) {
    std::cout << kUsage;
    return kExitOk;
  }
  std::vector<std::string> words = words_of(vm);
  if (words.size() != 1) return usage_error("keygen", "expected exactly one NAME");
  if (!security::valid_cert_name(words[0])) {
    return usage_error("keygen", "bad NAME '" + words[0] + "': use 1-64 of A-Z a-z 0-9 _ . - (no leading '.')");
  }
  auto cert = security::generate_cert();
  if (auto err = security::save_cert(cert, dir, words[0]); !err.empty()) {
    std::cerr << "zstore-cli keygen: " << err << "\n";
    return kExitFailure;
  }
  std::cout << cert.public_key << "\n";
  return kExitOk;
}

}  // namespace zstore::cli
