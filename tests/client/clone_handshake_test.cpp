// Failed CURVE handshakes against a real zstored (--curve-cert/--curve-allow):
// a CloneClient and zstore-cli chp with a wrong server key, an unknown key,
// no CURVE, or CURVE against a plain server report why within a bounded
// time instead of waiting silently; the right keys work, and a key allowed
// later (SIGHUP) clears the error.
#include <signal.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "client/clone_client.h"
#include "security/curve_cert.h"
#include "tests/support/curve_keys.h"
#include "tests/support/test_support.h"
#include "tests/support/zstored.h"

using zstore::client::CloneClient;
using zstore::security::SocketSecurity;
using zstore::testing::CurveKeys;
using zstore::testing::Process;
using zstore::testing::TempDir;
using zstore::testing::Zstored;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

struct Fixture {
  CurveKeys keys{{"alice", "mallory"}, {"alice"}};
  Zstored server{keys.server_args()};
  Fixture() { BOOST_REQUIRE(server.start()); }

  zstore::client::Options options(const SocketSecurity& security) const {
    zstore::client::Options o;
    o.servers = {server.chp_endpoint()};
    o.security = security;
    o.failover_timeout = 1000ms;
    return o;
  }
  SocketSecurity wrong_server_key() const {
    SocketSecurity s = keys.as("alice");
    s.server_key = keys.clients.at("mallory").public_key;
    return s;
  }
};

// The client's handshake error, once it has one (at most 10 s).
std::string error_of(const CloneClient& client) {
  client.wait_for([&] { return client.handshake_error().has_value(); }, zstore::testing::scaled(10s));
  BOOST_TEST(!client.synced());
  return client.handshake_error().value_or("(none)");
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(right_keys_sync_without_handshake_error, Fixture) {
  CloneClient client(options(keys.as("alice")));
  BOOST_REQUIRE(client.wait_synced(10s));
  BOOST_TEST(!client.handshake_error().has_value());
  BOOST_TEST(client.stats().handshake_failures == 0u);
}

BOOST_FIXTURE_TEST_CASE(unknown_key_is_reported_as_refused, Fixture) {
  CloneClient client(options(keys.as("mallory")));
  const std::string error = error_of(client);
  BOOST_TEST(contains(error, "the server refused our key (not in its allow list)"), error);
  BOOST_TEST(contains(error, "CURVE handshake with tcp://127.0.0.1:"), error);
  BOOST_TEST(client.stats().handshake_failures > 0u);
  BOOST_TEST(contains(client.stats().last_error, "refused our key"));
}

BOOST_FIXTURE_TEST_CASE(wrong_server_key_is_reported_as_a_mismatch, Fixture) {
  CloneClient client(options(wrong_server_key()));
  const std::string error = error_of(client);
  BOOST_TEST(contains(error, "server key mismatch"), error);
}

BOOST_FIXTURE_TEST_CASE(plaintext_client_of_a_curve_server_is_told_the_mechanisms_differ, Fixture) {
  CloneClient client(options(SocketSecurity{}));
  const std::string error = error_of(client);
  BOOST_TEST(contains(error, "security mechanism mismatch"), error);
}

BOOST_AUTO_TEST_CASE(curve_client_of_a_plain_server_is_told_the_mechanisms_differ) {
  CurveKeys keys{{"alice"}, {"alice"}};
  Zstored plain;
  BOOST_REQUIRE(plain.start());
  zstore::client::Options o;
  o.servers = {plain.chp_endpoint()};
  o.security = keys.as("alice");
  CloneClient client(o);
  const std::string error = error_of(client);
  // Which side notices first is a race: our client reads the server's NULL
  // greeting (mechanism mismatch), or the server's hang-up resets the
  // connection before that (told as a key mismatch that names this cause).
  BOOST_TEST((contains(error, "security mechanism mismatch") || contains(error, "or the server does not use CURVE")),
             error);
}

BOOST_FIXTURE_TEST_CASE(a_key_allowed_later_clears_the_error_and_syncs, Fixture) {
  CloneClient client(options(keys.as("mallory")));
  BOOST_TEST(contains(error_of(client), "refused our key"));
  keys.allow("mallory");
  server.kill(SIGHUP);
  BOOST_REQUIRE(client.wait_synced(zstore::testing::scaled(20s)));
  BOOST_TEST(!client.handshake_error().has_value());
}

// zstore-cli chp with a long --timeout-ms still fails fast, naming the cause.
BOOST_FIXTURE_TEST_CASE(cli_reports_handshake_failures_long_before_its_timeout, Fixture) {
  TempDir logs;
  int n = 0;
  auto cli = [&](std::vector<std::string> keys_args, std::vector<std::string> command) {
    std::vector<std::string> args{"chp", "-s", server.chp_endpoint(), "--timeout-ms", "60000"};
    args.insert(args.end(), keys_args.begin(), keys_args.end());
    args.insert(args.end(), command.begin(), command.end());
    const auto start = Clock::now();
    Process p(zstore::testing::bin_path("zstore-cli"), args, logs.path() / std::to_string(++n));
    const int code = p.wait(90s);
    const bool quick = Clock::now() - start < zstore::testing::scaled(15s);
    BOOST_TEST(quick, p.log());
    return std::pair{code, p.log()};
  };
  const std::vector<std::string> mallory{"--curve-cert", keys.file("mallory.key_secret"), "--server-key",
                                         keys.file("server.key")};
  const std::vector<std::string> wrong{"--curve-cert", keys.file("alice.key_secret"), "--server-key",
                                       keys.file("mallory.key")};
  for (const auto& command : std::vector<std::vector<std::string>>{{"get", "/k"}, {"set", "/k", "v"}, {"snapshot"}}) {
    auto refused = cli(mallory, command);
    BOOST_TEST(refused.first == 1, refused.second);
    BOOST_TEST(contains(refused.second, "refused our key (not in its allow list)"), refused.second);
    auto mismatch = cli(wrong, command);
    BOOST_TEST(mismatch.first == 1, mismatch.second);
    BOOST_TEST(contains(mismatch.second, "server key mismatch"), mismatch.second);
    auto plain = cli({}, command);
    BOOST_TEST(plain.first == 1, plain.second);
    BOOST_TEST(contains(plain.second, "security mechanism mismatch"), plain.second);
  }
  auto ok =
      cli({"--curve-cert", keys.file("alice.key_secret"), "--server-key", keys.file("server.key")}, {"set", "/k", "v"});
  BOOST_TEST(ok.first == 0, ok.second);
}
