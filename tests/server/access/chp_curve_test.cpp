// zstored with --curve-cert/--curve-allow, over real sockets: an allowed key
// reads and writes end to end (raw peer, CloneClient, zstore-cli); a
// plaintext client, an unknown key and a key removed before a SIGHUP get
// nothing (no snapshot, no KVPUB or HUGZ, their KVSETs not applied), also
// on the connections the removed key had open; an HA
// pair sharing the server certificate syncs, follows through a key removal
// and fails over; bad security
// flags stop start-up.
#include <signal.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "client/clone_client.h"
#include "security/curve_cert.h"
#include "tests/ops/ops_support.h"
#include "tests/support/curve_keys.h"
#include "tests/support/chp_peer.h"
#include "tests/support/test_support.h"
#include "tests/support/zstored.h"

namespace fs = std::filesystem;
using zstore::security::CurveCert;
using zstore::security::SocketSecurity;
using zstore::testing::ChpPeer;
using zstore::testing::CurveKeys;
using zstore::testing::HttpZstored;
using zstore::testing::Process;
using zstore::testing::TempDir;
using zstore::testing::wait_until;
using zstore::testing::Zstored;
using namespace std::chrono_literals;

namespace {

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The intruder gets no snapshot, no HUGZ (sent every 100 ms) and no KVPUB,
// and its KVSETs are not applied: the ally, allowed, sees its own marker
// published and no intruder key.
void expect_nothing(ChpPeer& intruder, ChpPeer& ally, const std::string& tag) {
  BOOST_TEST(!intruder.snapshot("", 1s).has_value());
  for (int i = 0; i < 10; ++i) {
    intruder.set("/intruder/" + tag, "x");
    BOOST_TEST(!intruder.next_update(100ms).has_value());
  }
  ally.set("/marker/" + tag, "m");
  BOOST_REQUIRE(ally.wait_kvpub("/marker/" + tag, 5s));
  BOOST_TEST(!intruder.next_update(300ms).has_value());
  auto snap = ally.snapshot("", 5s);
  BOOST_REQUIRE(snap);
  BOOST_TEST(snap->entries.count("/marker/" + tag) == 1u);
  BOOST_TEST(snap->entries.count("/intruder/" + tag) == 0u);
}

// zstore_chp_last_sequence exactly (as a double it would be rounded: the
// epoch is in the high bits).
std::uint64_t last_sequence(HttpZstored& z) {
  const std::string name = "\nzstore_chp_last_sequence ";
  std::string body = zstore::testing::http_request(z.http_port, "GET", "/metrics").body;
  auto at = body.find(name);
  return at == std::string::npos ? 0 : std::stoull(body.substr(at + name.size()));
}

struct Fixture {
  zmq::context_t ctx;
  CurveKeys keys{{"alice", "bob", "mallory"}, {"alice"}};
  Zstored server{keys.server_args()};
  Fixture() { BOOST_REQUIRE(server.start()); }
  std::unique_ptr<ChpPeer> peer(const SocketSecurity& security = {}) {
    return std::make_unique<ChpPeer>(ctx, "tcp://127.0.0.1", server.chp_port(), security);
  }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(allowed_key_reads_and_writes_end_to_end, Fixture) {
  auto alice = peer(keys.as("alice"));
  BOOST_REQUIRE(alice->wait_connected());
  alice->set("/a", "1");
  BOOST_REQUIRE(alice->wait_kvpub("/a", 5s));
  auto snap = alice->snapshot("", 5s);
  BOOST_REQUIRE(snap);
  BOOST_TEST(snap->entries.at("/a").body == "1");
  BOOST_TEST(server.log().find("our public key " + keys.server.public_key) != std::string::npos);

  zstore::client::Options o;
  o.servers = {server.chp_endpoint()};
  o.security = keys.as("alice");
  zstore::client::CloneClient client(o);
  BOOST_REQUIRE(client.wait_synced(10s));
  BOOST_TEST(client.get("/a").value_or("") == "1");
  BOOST_REQUIRE(client.wait_published(client.set("/b", "2"), 10s));
}

BOOST_FIXTURE_TEST_CASE(plaintext_client_gets_nothing, Fixture) {
  auto alice = peer(keys.as("alice"));
  auto plain = peer();
  expect_nothing(*plain, *alice, "plain");
}

BOOST_FIXTURE_TEST_CASE(unknown_key_gets_nothing_and_is_logged, Fixture) {
  auto alice = peer(keys.as("alice"));
  auto mallory = peer(keys.as("mallory"));
  expect_nothing(*mallory, *alice, "mallory");
  BOOST_TEST(server.log().find("refused unknown client key " + keys.clients.at("mallory").public_key) !=
             std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(sighup_rereads_the_allow_list, Fixture) {
  auto alice_before = peer(keys.as("alice"));  // allowed, and served, until the reload
  BOOST_REQUIRE(alice_before->wait_connected());
  BOOST_REQUIRE(alice_before->snapshot("", 5s).has_value());
  auto before = peer(keys.as("bob"));
  BOOST_TEST(!before->snapshot("", 1s).has_value());  // bob is not allowed yet
  keys.forbid("alice");
  keys.allow("bob");
  server.kill(SIGHUP);
  BOOST_REQUIRE(wait_until([&] { return count(server.log(), "CURVE allow list: 1 client key(s)") == 2; }));
  auto bob = peer(keys.as("bob"));
  BOOST_REQUIRE(bob->wait_connected());
  auto alice = peer(keys.as("alice"));  // a new connection with the removed key
  expect_nothing(*alice, *bob, "removed");
}

// A key removed from the allow list loses the connections it has open, not
// only its next one: zstored ends every connection to the three ports and
// the others come back by themselves.
BOOST_FIXTURE_TEST_CASE(removing_a_key_ends_its_open_connections, Fixture) {
  keys.allow("bob");
  server.kill(SIGHUP);
  BOOST_REQUIRE(wait_until([&] { return count(server.log(), "CURVE allow list: 2 client key(s)") == 1; }));
  auto alice = peer(keys.as("alice"));
  auto bob = peer(keys.as("bob"));
  BOOST_REQUIRE(alice->wait_connected());
  BOOST_REQUIRE(bob->wait_connected());
  BOOST_REQUIRE(alice->snapshot("", 5s).has_value());

  keys.forbid("alice");
  server.kill(SIGHUP);
  BOOST_REQUIRE(wait_until([&] { return server.log().find("ending every connection to") != std::string::npos; }));
  BOOST_TEST(server.log().find("key(s) of alice removed") != std::string::npos);
  BOOST_REQUIRE_MESSAGE(bob->wait_connected(), server.log());  // bob reconnected by himself
  // What alice received before her connection ended; HUGZ every 100 ms
  // would never let this end if it had not.
  for (int i = 0; i < 50 && alice->next_update(300ms); ++i) {
  }
  expect_nothing(*alice, *bob, "revoked");
}

BOOST_AUTO_TEST_CASE(ha_pair_syncs_and_fails_over_with_curve) {
  CurveKeys keys{{"alice", "bob", "mallory"}, {"alice", "bob"}};
  HttpZstored primary_http{keys.server_args()}, backup_http{keys.server_args()};
  Zstored& primary = primary_http.server;
  Zstored& backup = backup_http.server;
  std::uint16_t ha = zstore::testing::free_port_range(2);
  auto ep = [](int port) { return "tcp://127.0.0.1:" + std::to_string(port); };
  primary.add_args({"--ha", "primary", "--ha-bind", ep(ha), "--ha-peer", ep(ha + 1), "--ha-peer-chp",
                    ep(backup.chp_port()), "--ha-heartbeat-ms", "200"});
  backup.add_args({"--ha", "backup", "--ha-bind", ep(ha + 1), "--ha-peer", ep(ha), "--ha-peer-chp",
                   ep(primary.chp_port()), "--ha-heartbeat-ms", "200"});
  BOOST_REQUIRE(primary.start());
  BOOST_REQUIRE(backup.start());
  zstore::client::Options o;
  o.servers = {primary.chp_endpoint(), backup.chp_endpoint()};
  o.security = keys.as("alice");
  o.failover_timeout = 1000ms;
  zstore::client::CloneClient client(o);
  BOOST_REQUIRE(client.wait_synced(10s));
  BOOST_REQUIRE(client.wait_published(client.set("/ha", "before"), 10s));
  // The backup hears the primary (HA link) and follows it (snapshot + KVPUBs).
  BOOST_REQUIRE(wait_until([&] { return backup.ha_follower_synced(); }));
  // A stranger on the primary's HA port hears none of the state messages
  // (one every 200 ms) and is logged, and so does an allowed client: only
  // the pair's own key is admitted there.
  for (const char* name : {"mallory", "alice"}) {
    zmq::context_t ictx;
    zmq::socket_t sub(ictx, zmq::socket_type::sub);
    sub.set(zmq::sockopt::linger, 0);
    keys.as(name).as_client(sub);
    sub.set(zmq::sockopt::subscribe, "");
    sub.set(zmq::sockopt::rcvtimeo, 1500);
    sub.connect(ep(ha));
    zmq::message_t state;
    BOOST_TEST(!sub.recv(state).has_value(), name);
  }
  const std::string refused = "refused unknown client key " + keys.clients.at("mallory").public_key;
  BOOST_TEST(wait_until([&] { return primary.log().find(refused + " from 127.0.0.1 on ha") != std::string::npos; }),
             primary.log());
  BOOST_TEST(primary.log().find("refused client 'alice' from 127.0.0.1 on ha: only the HA peer may connect there") !=
                 std::string::npos,
             primary.log());
  // Removing a key ends every connection to the active's CHP ports, the
  // passive's follower's too: it reconnects (with the pair's key) and goes
  // on following, and the client reconnects and writes on.
  keys.forbid("bob");
  primary.kill(SIGHUP);
  backup.kill(SIGHUP);
  BOOST_REQUIRE(wait_until([&] { return primary.log().find("ending every connection to") != std::string::npos; }));
  // A KVSET is fire and forget: one sent while the connection it went to
  // was being ended is lost with it, so the client sets again until one of
  // its sets is published (within the same 20 s).
  bool published = false;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (!published && std::chrono::steady_clock::now() < deadline) {
    published = client.wait_published(client.set("/ha-during", "revoked"), 2s);
  }
  BOOST_REQUIRE_MESSAGE(published, primary.log());
  BOOST_REQUIRE_MESSAGE(wait_until([&] { return last_sequence(backup_http) == last_sequence(primary_http); }, 20s),
                        backup.log());

  primary.kill(SIGKILL);
  BOOST_REQUIRE(primary.wait_exit() >= 0);
  BOOST_REQUIRE(client.wait_published(client.set("/ha", "after"), 20s));  // served by the backup now
  zmq::context_t ctx;
  ChpPeer reader(ctx, "tcp://127.0.0.1", backup.chp_port(), keys.as("alice"));
  auto snap = reader.snapshot("", 5s);
  BOOST_REQUIRE(snap);
  BOOST_TEST(snap->entries.at("/ha").body == "after");
  BOOST_TEST(snap->entries.at("/ha-during").body == "revoked");
}

BOOST_FIXTURE_TEST_CASE(cli_needs_the_right_keys, Fixture) {
  TempDir logs;
  int n = 0;
  // The CLI's timeout covers three CURVE handshakes and the sync: 10 s, as
  // slow as a sanitizer build gets; a failed handshake ends it at once,
  // and only the plaintext case waits for all of its (shorter) timeout.
  auto cli = [&](std::vector<std::string> extra, const char* timeout_ms = "10000") {
    std::vector<std::string> args{"chp", "-s", server.chp_endpoint(), "--timeout-ms", timeout_ms};
    args.insert(args.end(), extra.begin(), extra.end());
    Process p(zstore::testing::bin_path("zstore-cli"), args, logs.path() / std::to_string(++n));
    int code = p.wait(20s);
    return std::pair{code, p.log()};
  };
  auto ok =
      cli({"--curve-cert", keys.file("alice.key_secret"), "--server-key", keys.file("server.key"), "set", "/c", "v"});
  BOOST_TEST(ok.first == 0, ok.second);
  auto wrong =
      cli({"--curve-cert", keys.file("alice.key_secret"), "--server-key", keys.file("mallory.key"), "get", "/c"});
  BOOST_TEST(wrong.first == 1, wrong.second);
  BOOST_TEST(wrong.second.find("server key mismatch") != std::string::npos, wrong.second);
  auto plain = cli({"get", "/c"}, "2000");
  BOOST_TEST(plain.first == 1, plain.second);
  auto half = cli({"--curve-cert", keys.file("alice.key_secret"), "get", "/c"});
  BOOST_TEST(half.first == 2, half.second);
  auto public_only =
      cli({"--curve-cert", keys.file("alice.key"), "--server-key", keys.file("server.key"), "get", "/c"});
  BOOST_TEST(public_only.first == 2, public_only.second);
  BOOST_TEST(public_only.second.find("no secret-key") != std::string::npos, public_only.second);
}

BOOST_AUTO_TEST_CASE(bad_security_flags_stop_startup) {
  CurveKeys keys{{"alice", "bob", "mallory"}, {"alice"}};
  TempDir data;
  auto start = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"--data-dir",   data.str(), "--chp-port",   "0",
                                  "--dafka-port", "0",        "--tower-port", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    Process p(zstore::testing::bin_path("zstored"), args, data.path() / "log");
    int code = p.wait(20s);
    return std::pair{code, p.log()};
  };
  auto alone = start({"--curve-cert", keys.file("server.key_secret")});
  BOOST_TEST(alone.first == 2, alone.second);
  BOOST_TEST(alone.second.find("go together") != std::string::npos);
  auto public_only = start({"--curve-cert", keys.file("server.key"), "--curve-allow", keys.allow_dir().string()});
  BOOST_TEST(public_only.first == 1, public_only.second);
  BOOST_TEST(public_only.second.find("no secret-key") != std::string::npos, public_only.second);
  auto no_dir = start({"--curve-cert", keys.file("server.key_secret"), "--curve-allow", keys.file("nowhere")});
  BOOST_TEST(no_dir.first == 1, no_dir.second);
  BOOST_TEST(no_dir.second.find("--curve-allow") != std::string::npos, no_dir.second);
}
