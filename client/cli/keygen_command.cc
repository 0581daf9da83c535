#include "client/cli/keygen_command.h"

#include <boost/program_options.hpp>
#include <iostream>

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
  std::vector<std::string> words;
  po::options_description o("Options");
  o.add_options()("help,h", "show this help")("dir,d", po::value(&dir), "directory for the files")(
      "words", po::value(&words));
  po::positional_options_description pos;
  pos.add("words", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(o).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "zstore-cli keygen: " << e.what() << "\n" << kUsage;
    return kExitUsage;
  }
  if (vm.count("help")) {
    std::cout << kUsage;
    return kExitOk;
  }
  if (words.size() != 1) {
    std::cerr << "zstore-cli keygen: expected exactly one NAME\n" << kUsage;
    return kExitUsage;
  }
  if (!security::valid_cert_name(words[0])) {
    std::cerr << "zstore-cli keygen: bad NAME '" << words[0] << "': use 1-64 of A-Z a-z 0-9 _ . - (no leading '.')\n";
    return kExitUsage;
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
