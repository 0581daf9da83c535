// Secure by default (issue 16): the HTTP bearer token guards /metrics and
// /admin/* but not /healthz; checkpoints stay under --backup-dir; start-up
// refuses ZeroMQ or HTTP ports beyond loopback without CURVE or a token
// unless --insecure.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include "server/http/http_auth.h"
#include "server/options/options.h"
#include "tests/ops/ops_support.h"

using namespace zstore::testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

constexpr const char* kToken = "s3cret-T0ken";

std::string write_token(const TempDir& dir) {
  auto path = (dir.path() / "token").string();
  std::ofstream(path) << kToken << "\n";
  return path;
}

zstore::server::ParseOutcome parse(std::vector<std::string> args) {
  args.insert(args.begin(), "zstored");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  const char* env[] = {nullptr};
  return zstore::server::parse_options(static_cast<int>(argv.size()), argv.data(), env);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

BOOST_AUTO_TEST_CASE(bearer_token_must_match_exactly) {
  using zstore::server::bearer_matches;
  BOOST_TEST(bearer_matches("Bearer abc", "abc"));
  BOOST_TEST(!bearer_matches("Bearer abd", "abc"));
  BOOST_TEST(!bearer_matches("Bearer abcd", "abc"));
  BOOST_TEST(!bearer_matches("Bearer ab", "abc"));
  BOOST_TEST(!bearer_matches("Basic abc", "abc"));
  BOOST_TEST(!bearer_matches("", "abc"));
  BOOST_TEST(!bearer_matches("Bearer ", ""));
}

BOOST_AUTO_TEST_CASE(backup_names_stay_inside_the_backup_dir) {
  using zstore::server::backup_target;
  std::string error;
  BOOST_TEST(backup_target("/b", "daily", &error).value_or("") == "/b/daily");
  BOOST_TEST(backup_target("/b", "2026/daily", &error).value_or("") == "/b/2026/daily");
  for (std::string bad : {"/etc/x", "../x", "a/../../x", "..", ".", ".hidden", "a/./b", ""}) {
    BOOST_TEST(!backup_target("/b", bad, &error).has_value(), bad);
  }
  BOOST_TEST(!backup_target("", "daily", &error).has_value());
  BOOST_TEST(contains(error, "--backup-dir"));
}

BOOST_AUTO_TEST_CASE(token_guards_metrics_and_admin_but_not_healthz) {
  TempDir dir;
  fs::create_directory(dir.path() / "backups");
  HttpZstored z({"--http-token-file", write_token(dir), "--backup-dir", (dir.path() / "backups").string()});
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  BOOST_TEST(wait_until([&] { return http_request(z.http_port, "GET", "/healthz").status == 200; }));
  BOOST_TEST(http_request(z.http_port, "GET", "/metrics").status == 401);
  BOOST_TEST(http_request(z.http_port, "GET", "/metrics", "", "wrong").status == 401);
  auto metrics = http_request(z.http_port, "GET", "/metrics", "", kToken);
  BOOST_TEST(metrics.status == 200);
  BOOST_TEST(contains(metrics.body, "zstore_chp_keys"));
  BOOST_TEST(contains(metrics.body, "zstore_auth_failures_total{port=\"http\"} 2\n"), metrics.body);
  BOOST_TEST(http_request(z.http_port, "POST", "/admin/checkpoint", "dir=a").status == 401);
  BOOST_TEST(!fs::exists(dir.path() / "backups" / "a"));
  BOOST_TEST(http_request(z.http_port, "POST", "/admin/checkpoint", "dir=a", kToken).status == 201);
  BOOST_TEST(fs::is_directory(dir.path() / "backups" / "a"));
  BOOST_TEST(http_request(z.http_port, "POST", "/admin/nothing", "", "").status == 401);

  std::string base = "http://127.0.0.1:" + std::to_string(z.http_port), out;
  int rc = run_command({bin_path("zstore-cli"), "admin", "--server", base, "checkpoint", "b"}, &out);
  BOOST_TEST(rc == 1);
  BOOST_TEST(contains(out, "401"), out);
  out.clear();
  rc = run_command({bin_path("zstore-cli"), "admin", "--server", base, "--token-file", (dir.path() / "token").string(),
                    "checkpoint", "b"},
                   &out);
  BOOST_TEST(rc == 0, out);
  BOOST_TEST(fs::is_directory(dir.path() / "backups" / "b"));
}

BOOST_AUTO_TEST_CASE(checkpoints_need_a_backup_dir_and_stay_inside_it) {
  TempDir dir;
  fs::create_directory(dir.path() / "backups");
  HttpZstored off;
  BOOST_REQUIRE_MESSAGE(off.server.start(), off.server.log());
  auto r = http_request(off.http_port, "POST", "/admin/checkpoint", "dir=" + (dir.path() / "x").string());
  BOOST_TEST(r.status == 403);
  BOOST_TEST(contains(r.body, "--backup-dir"), r.body);
  BOOST_TEST(!fs::exists(dir.path() / "x"));

  HttpZstored on({"--backup-dir", (dir.path() / "backups").string()});
  BOOST_REQUIRE_MESSAGE(on.server.start(), on.server.log());
  for (std::string bad : {(dir.path() / "abs").string(), std::string("../escape"), std::string("x/../../escape2")}) {
    BOOST_TEST(http_request(on.http_port, "POST", "/admin/checkpoint", "dir=" + bad).status == 400, bad);
  }
  BOOST_TEST(!fs::exists(dir.path() / "abs"));
  BOOST_TEST(!fs::exists(dir.path() / "escape"));
  BOOST_TEST(!fs::exists(dir.path() / "escape2"));
  BOOST_TEST(http_request(on.http_port, "POST", "/admin/checkpoint", "dir=ok").status == 201);
  BOOST_TEST(fs::is_directory(dir.path() / "backups" / "ok"));
}

BOOST_AUTO_TEST_CASE(non_loopback_binds_need_curve_or_a_token_or_insecure) {
  auto zmq = parse({"--bind", "0.0.0.0"});
  BOOST_TEST(zmq.exit_code == 2);
  BOOST_TEST(contains(zmq.message, "zstore-cli keygen"), zmq.message);
  BOOST_TEST(contains(zmq.message, "--insecure"), zmq.message);
  BOOST_TEST(parse({"--bind", "0.0.0.0", "--insecure"}).options.has_value());
  BOOST_TEST(parse({"--bind", "127.0.0.2"}).options.has_value());
  BOOST_TEST(parse({"--bind", "0.0.0.0", "--dafka-port", "0", "--tower-port", "0", "--curve-cert", "s.key_secret",
                    "--curve-allow", "allow"})
                 .options.has_value());
  auto ha = parse({"--ha", "primary", "--ha-bind", "tcp://0.0.0.0:5003", "--ha-peer", "tcp://10.0.0.2:5004",
                   "--ha-peer-chp", "tcp://10.0.0.2:5556"});
  BOOST_TEST(ha.exit_code == 2);
  BOOST_TEST(contains(ha.message, "--ha-bind"), ha.message);

  std::vector<std::string> http_only{"--bind", "0.0.0.0",      "--chp-port", "0",           "--dafka-port",
                                     "0",      "--tower-port", "0",          "--http-port", "8080"};
  auto http = parse(http_only);
  BOOST_TEST(http.exit_code == 2);
  BOOST_TEST(contains(http.message, "--http-token-file"), http.message);
  http_only.insert(http_only.end(), {"--http-token-file", "t"});
  BOOST_TEST(parse(http_only).options.has_value());
}

BOOST_AUTO_TEST_CASE(zstored_refuses_to_start_on_all_interfaces_without_curve) {
  TempDir dir;
  Process p(bin_path("zstored"), {"--data-dir", dir.str(), "--bind", "0.0.0.0"}, dir.path() / "log");
  BOOST_TEST(p.wait(20s) == 2);
  BOOST_TEST(contains(p.log(), "without CURVE"), p.log());
  BOOST_TEST(!fs::exists(dir.path() / "CURRENT"));  // never opened the database
}

BOOST_AUTO_TEST_CASE(zstored_refuses_an_open_http_port_without_a_token_and_an_open_ha_bind_without_curve) {
  TempDir dir;
  std::string http_port = std::to_string(zstore::testing::free_port());
  Process http(bin_path("zstored"),
               {"--data-dir", dir.str(), "--bind", "0.0.0.0", "--chp-port", "0", "--dafka-port", "0", "--tower-port",
                "0", "--http-port", http_port},
               dir.path() / "http.log");
  BOOST_TEST(http.wait(20s) == 2);
  BOOST_TEST(contains(http.log(), "--http-token-file"), http.log());
  // Free ports, so that a zstored that wrongly started would bind none in use.
  std::string ha_port = std::to_string(zstore::testing::free_port());
  std::string chp_port = std::to_string(zstore::testing::free_port_range(3));
  Process ha(bin_path("zstored"),
             {"--data-dir", dir.str(), "--chp-port", chp_port, "--dafka-port", "0", "--tower-port", "0", "--ha",
              "primary", "--ha-bind", "tcp://0.0.0.0:" + ha_port, "--ha-peer", "tcp://10.0.0.2:5004", "--ha-peer-chp",
              "tcp://10.0.0.2:5556"},
             dir.path() / "ha.log");
  BOOST_TEST(ha.wait(20s) == 2);
  BOOST_TEST(contains(ha.log(), "--ha-bind"), ha.log());
  BOOST_TEST(!fs::exists(dir.path() / "CURRENT"));
}
