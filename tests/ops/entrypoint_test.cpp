// tools/docker-entrypoint, the container's entry point, run here without
// Docker (keys, data and binaries moved by environment, loopback ports):
// first start makes the server's keys and HTTP token, serves CURVE only to
// allowed clients and HTTP /metrics only with the token; Dafka (store and
// tower) stays on, under CURVE; flags after it win over its defaults;
// --insecure runs plain.
#include <signal.h>
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <zmq.hpp>

#include "security/curve_cert.h"
#include "tests/ops/ops_support.h"
#include "tests/support/chp_peer.h"

using namespace zstore::testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Entrypoint {
  TempDir root;
  std::uint16_t chp = free_port_range(3), http = free_port(), tower = free_port_range(3);
  std::unique_ptr<Process> process;
  int starts = 0;

  Entrypoint() {
    ::setenv("ZSTORE_KEYS_DIR", (root.path() / "keys").c_str(), 1);
    ::setenv("ZSTORE_DATA_DIR", (root.path() / "data").c_str(), 1);
    ::setenv("ZSTORE_BACKUP_DIR", root.str().c_str(), 1);
    ::setenv("ZSTORE_BIN_DIR", fs::path(bin_path("zstored")).parent_path().c_str(), 1);
  }
  bool start(std::vector<std::string> extra) {
    std::vector<std::string> args{std::string(ZSTORE_SOURCE_DIR) + "/tools/docker-entrypoint",
                                  "--bind",
                                  "127.0.0.1",
                                  "--chp-port",
                                  std::to_string(chp),
                                  "--http-port",
                                  std::to_string(http)};
    args.insert(args.end(), extra.begin(), extra.end());
    process = std::make_unique<Process>("/bin/sh", args, root.path() / ("log" + std::to_string(++starts)));
    return wait_until(
               [&] { return !process->running() || process->log().find("zstored started") != std::string::npos; },
               20s) &&
           process->running();
  }
  std::string log() const { return process ? process->log() : std::string(); }
};

}  // namespace

BOOST_AUTO_TEST_CASE(first_start_makes_keys_and_serves_securely) {
  Entrypoint e;
  fs::create_directories(e.root.path() / "keys" / "allow");
  auto alice = zstore::security::generate_cert();
  BOOST_REQUIRE_EQUAL(zstore::security::save_cert(alice, (e.root.path() / "keys" / "allow").string(), "alice"), "");
  auto dafka =
      std::vector<std::string>{"--tower-port", std::to_string(e.tower), "--dafka-port", std::to_string(e.tower + 2)};
  BOOST_REQUIRE_MESSAGE(e.start(dafka), e.log());
  // The tower and the store log from their own threads, maybe after "zstored started".
  const std::string tower_line = "Dafka tower on tcp://127.0.0.1:" + std::to_string(e.tower);
  BOOST_TEST(wait_until([&] { return e.log().find(tower_line) != std::string::npos; }, 10s), e.log());
  BOOST_TEST(wait_until([&] { return e.log().find("with CURVE, towers:") != std::string::npos; }, 10s), e.log());
  auto keys = e.root.path() / "keys";
  auto server = zstore::security::load_cert((keys / "server.key_secret").string(), true);
  BOOST_REQUIRE_MESSAGE(server.cert, server.error);
  BOOST_TEST(e.process->log().find("our public key " + server.cert->public_key) != std::string::npos);
  struct stat st {};
  BOOST_REQUIRE_EQUAL(::stat((keys / "http-token").c_str(), &st), 0);
  BOOST_TEST((st.st_mode & 0077) == 0u);
  std::string token = read(keys / "http-token");
  BOOST_TEST(token.size() == 64u);

  BOOST_TEST(http_request(e.http, "GET", "/metrics").status == 401);
  BOOST_TEST(http_request(e.http, "GET", "/metrics", "", token).status == 200);
  BOOST_TEST(http_request(e.http, "POST", "/admin/checkpoint", "dir=cp", token).status == 201);
  BOOST_TEST(fs::is_directory(e.root.path() / "cp"));

  zmq::context_t ctx;
  ChpPeer plain(ctx, "tcp://127.0.0.1", e.chp);
  BOOST_TEST(!plain.snapshot("", 1s).has_value());
  ChpPeer allowed(ctx, "tcp://127.0.0.1", e.chp, {alice, server.cert->public_key});
  BOOST_TEST(allowed.snapshot("", 5s).has_value());

  // A restart keeps the keys.
  e.process->kill(SIGTERM);
  BOOST_REQUIRE_EQUAL(e.process->wait(), 0);
  BOOST_REQUIRE_MESSAGE(e.start(dafka), e.log());
  BOOST_TEST(read(keys / "http-token") == token);
  BOOST_TEST(zstore::security::load_cert((keys / "server.key").string(), false).cert->public_key ==
             server.cert->public_key);
}

BOOST_AUTO_TEST_CASE(insecure_runs_plain_and_makes_nothing) {
  Entrypoint e;
  BOOST_REQUIRE_MESSAGE(e.start({"--insecure", "--dafka-port", "0", "--tower-port", "0"}), e.log());
  BOOST_TEST(!fs::exists(e.root.path() / "keys"));
  zmq::context_t ctx;
  ChpPeer plain(ctx, "tcp://127.0.0.1", e.chp);
  BOOST_TEST(plain.snapshot("", 5s).has_value());
  BOOST_TEST(http_request(e.http, "GET", "/metrics").status == 200);
}

// The entry point leaves Dafka's ports to zstored's defaults in secure mode
// too (it used to turn Dafka off): run it on a stand-in zstored that records
// its environment.
BOOST_AUTO_TEST_CASE(secure_mode_keeps_dafka_on) {
  Entrypoint e;
  auto bin = e.root.path() / "bin";
  fs::create_directories(bin);
  fs::create_symlink(bin_path("zstore-cli"), bin / "zstore-cli");
  auto env_file = e.root.path() / "env";
  {
    std::ofstream stub(bin / "zstored");
    stub << "#!/bin/sh\nenv > '" << env_file.string() << "'\n";
  }
  fs::permissions(bin / "zstored", fs::perms::owner_all);
  ::setenv("ZSTORE_BIN_DIR", bin.c_str(), 1);
  std::string out;
  BOOST_REQUIRE_EQUAL(run_command({"/bin/sh", std::string(ZSTORE_SOURCE_DIR) + "/tools/docker-entrypoint"}, &out), 0);
  std::string env = read(env_file);
  BOOST_TEST(env.find("ZSTORE_CURVE_CERT=") != std::string::npos, env);
  BOOST_TEST(env.find("ZSTORE_DAFKA_PORT") == std::string::npos, env);
  BOOST_TEST(env.find("ZSTORE_TOWER_PORT") == std::string::npos, env);
}
