#include "client/cli/admin_command.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include <boost/program_options.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <iostream>
#include <regex>
#include <stdexcept>

#include "client/cli/arguments.h"
#include "client/cli/subcommand.h"

namespace zstore::cli {
namespace {

namespace po = boost::program_options;

constexpr const char* kDefaultServer = "http://127.0.0.1:8080";

const char* kUsage =
    "usage: zstore-cli admin [--server http://HOST:H] [--timeout-ms N] [--token-file F] health\n"
    "       zstore-cli admin [--server http://HOST:H] [--timeout-ms N] [--token-file F] checkpoint NAME\n"
    "\n"
    "health      print zstored's /healthz; exit 0 when healthy, 1 otherwise\n"
    "checkpoint  make the running zstored write a RocksDB checkpoint into NAME, a\n"
    "            new subdirectory of its --backup-dir on the SERVER's host;\n"
    "            'zstored --data-dir BACKUP_DIR/NAME' then starts from that state\n"
    "--token-file F sends the token in F (the server's --http-token-file) as\n"
    "'Authorization: Bearer TOKEN'.\n"
    "\n"
    "The server must run with --http-port H. Exit status: 0 ok, 1 failed or\n"
    "unhealthy, 2 usage error.\n";

struct Invocation {
  std::string server = kDefaultServer;
  std::uint64_t timeout_ms = 5000;
  std::string token_file;
  std::vector<std::string> words;  // command and its arguments
};

Invocation parse(const std::vector<std::string>& args, bool* help) {
  Invocation inv;
  po::options_description o("Options");
  o.add_options()("help,h", "show this help")                                                        //
      ("server,s", po::value(&inv.server), "zstored HTTP endpoint (default http://127.0.0.1:8080)")  //
      ("timeout-ms", po::value<std::string>(), "give up after N ms (default 5000)")                  //
      ("token-file", po::value(&inv.token_file), "file with the server's HTTP token");
  po::variables_map vm = parse_command_line(args, o);
  inv.words = words_of(vm);
  *help = vm.count("help") > 0;
  if (*help) return inv;
  static const std::regex url(R"(^https?://[^/:]+(:[0-9]{1,5})?/?$)");
  if (!std::regex_match(inv.server, url))
    throw UsageError("--server: expected http://HOST:PORT, got '" + inv.server + "'");
  if (vm.count("timeout-ms")) inv.timeout_ms = parse_number(vm, "timeout-ms", 1, 86400000);
  if (inv.words.empty()) throw UsageError("missing command (health or checkpoint)");
  const std::string& cmd = inv.words[0];
  std::size_t want = cmd == "health" ? 1 : cmd == "checkpoint" ? 2 : 0;
  if (want == 0) throw UsageError("unknown command '" + cmd + "'");
  if (inv.words.size() != want) throw UsageError(cmd + (want == 1 ? " takes no argument" : " takes exactly one NAME"));
  if (want == 2 && std::filesystem::path(inv.words[1]).is_absolute()) {
    throw UsageError("checkpoint: NAME is a new subdirectory of the server's --backup-dir, not an absolute path ('" +
                     inv.words[1] + "')");
  }
  return inv;
}

httplib::Client client(const Invocation& inv) {
  std::string server = inv.server.back() == '/' ? inv.server.substr(0, inv.server.size() - 1) : inv.server;
  httplib::Client c(server);
  auto sec = static_cast<time_t>(inv.timeout_ms / 1000);
  auto usec = static_cast<time_t>((inv.timeout_ms % 1000) * 1000);
  c.set_connection_timeout(sec, usec);
  c.set_read_timeout(sec, usec);
  c.set_write_timeout(sec, usec);
  if (!inv.token_file.empty()) {
    std::ifstream in(inv.token_file);
    std::stringstream text;
    text << in.rdbuf();
    std::string token = text.str();
    token.erase(token.find_last_not_of(" \t\r\n") + 1);
    token.erase(0, token.find_first_not_of(" \t\r\n"));
    if (!in || token.empty()) throw std::runtime_error("cannot read a token from --token-file " + inv.token_file);
    c.set_bearer_token_auth(token);
  }
  return c;
}

// The "error" field of a JSON reply, else the raw body.
std::string error_of(const httplib::Response& res) {
  auto j = nlohmann::json::parse(res.body, nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_string()) return j["error"].get<std::string>();
  return res.body.empty() ? "HTTP " + std::to_string(res.status) : res.body;
}

int health(const Invocation& inv) {
  auto res = client(inv).Get("/healthz");
  if (!res) {
    std::cerr << "zstore-cli admin: cannot reach " << inv.server << " (" << httplib::to_string(res.error())
              << " error)\n";
    return kExitFailure;
  }
  std::cout << res->body;
  if (res->status == 200) return kExitOk;
  if (res->status != 503)
    std::cerr << "zstore-cli admin: health: HTTP " << res->status << ": " << error_of(*res) << "\n";
  return kExitFailure;
}

int checkpoint(const Invocation& inv) {
  httplib::Params params{{"dir", inv.words[1]}};
  auto res = client(inv).Post("/admin/checkpoint", params);
  if (!res) {
    std::cerr << "zstore-cli admin: cannot reach " << inv.server << " (" << httplib::to_string(res.error())
              << " error)\n";
    return kExitFailure;
  }
  if (res->status != 201) {
    std::cerr << "zstore-cli admin: checkpoint refused (HTTP " << res->status << "): " << error_of(*res) << "\n";
    return kExitFailure;
  }
  auto j = nlohmann::json::parse(res->body, nullptr, false);
  bool named = j.is_object() && j.contains("checkpoint") && j["checkpoint"].is_string();
  std::cout << "checkpoint written to " << (named ? j["checkpoint"].get<std::string>() : inv.words[1])
            << " on the server host\n";
  return kExitOk;
}

}  // namespace

int run_admin(const std::vector<std::string>& args) {
  bool help = false;
  Invocation inv;
  try {
    inv = parse(args, &help);
  } catch (const UsageError& e) {
    return usage_error("admin", e.what());
  }
  if (help) {
    std::cout << kUsage;
    return kExitOk;
  }
  try {
    return inv.words[0] == "health" ? health(inv) : checkpoint(inv);
  } catch (const std::runtime_error& e) {
    std::cerr << "zstore-cli admin: " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace zstore::cli
