#include "client/cli/arguments.h"

#include <boost/program_options/parsers.hpp>
#include <boost/program_options/positional_options.hpp>
#include <iostream>
#include <string>

#include "client/cli/subcommand.h"

namespace zstore::cli {

namespace po = boost::program_options;

po::variables_map parse_command_line(const std::vector<std::string>& args, po::options_description options) {
  options.add_options()("words", po::value<std::vector<std::string>>(), "");
  po::positional_options_description positional;
  positional.add("words", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
    po::notify(vm);  // fills the variables options are bound to
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return vm;
}

std::vector<std::string> words_of(const po::variables_map& vm) {
  return vm.count("words") ? vm["words"].as<std::vector<std::string>>() : std::vector<std::string>{};
}

int usage_error(std::string_view family, std::string_view message) {
  std::cerr << "zstore-cli " << family << ": " << message << "\nTry 'zstore-cli " << family << " --help'.\n";
  return kExitUsage;
}

std::uint64_t parse_number(const boost::program_options::variables_map& vm, const char* name, std::uint64_t min,
                           std::uint64_t max) {
  const std::string text = vm[name].as<std::string>();
  std::uint64_t value = 0;
  std::size_t used = 0;
  try {
    if (text.empty() || text[0] == '-' || text[0] == '+') throw std::invalid_argument(text);
    value = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || used == 0 || value < min || value > max) {
    throw UsageError("--" + std::string(name) + " needs a number from " + std::to_string(min) + " to " +
                     std::to_string(max) + ", not '" + text + "'");
  }
  return value;
}

void add_curve_options(boost::program_options::options_description& options) {
  namespace po = boost::program_options;
  options.add_options()("curve-cert", po::value<std::string>(),
                        "CURVE: our secret certificate (zstore-cli keygen NAME writes NAME.key_secret)")  //
      ("server-key", po::value<std::string>(), "CURVE: the server's public certificate (its NAME.key)");
}

security::SocketSecurity curve_from(const boost::program_options::variables_map& vm) {
  security::SocketSecurity s;
  if (!vm.count("curve-cert") && !vm.count("server-key")) return s;
  if (!vm.count("curve-cert") || !vm.count("server-key")) throw UsageError("--curve-cert and --server-key go together");
  auto ours = security::load_cert(vm["curve-cert"].as<std::string>(), true);
  if (!ours.cert) throw UsageError("--curve-cert: " + ours.error);
  auto server = security::load_cert(vm["server-key"].as<std::string>(), false);
  if (!server.cert) throw UsageError("--server-key: " + server.error);
  s.cert = ours.cert;
  s.server_key = server.cert->public_key;
  return s;
}

std::string curve_hint(const security::SocketSecurity& security) {
  if (!security.curve()) return {};
  return "; with CURVE this also means the server refused our key (not in its --curve-allow) or --server-key is "
         "not the server's key";
}

}  // namespace zstore::cli
