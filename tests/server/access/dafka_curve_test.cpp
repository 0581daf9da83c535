// Dafka under CURVE, over real sockets: zstored with --curve-cert and
// --curve-allow (store, embedded tower) and the Dafka client library. Allowed
// keys produce, get ACKed and consume end to end (records and heads), also
// through a second zstored sharing the cluster certificate; a plaintext
// producer, an unknown key, a key removed before a SIGHUP (also from a
// producer connected with it) and a wrong server
// key get nothing stored and a clear handshake error; a beacon that
// announces a key outside the allow list is not connected to; a producer's
// publisher serves zstored and announced peers, not a stranger with its key;
// zstore-cli
// dafka works with keys and fails with the reason, not a time-out, without.
#include <signal.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <zmq.hpp>

#include "client/dafka_consumer.h"
#include "client/dafka_producer.h"
#include "tests/ops/ops_support.h"
#include "tests/support/curve_keys.h"
#include "tests/support/test_support.h"

namespace dafka = zstore::client::dafka;
using zstore::security::SocketSecurity;
using zstore::testing::CurveKeys;
using zstore::testing::HttpZstored;
using zstore::testing::wait_until;
using namespace std::chrono_literals;
using Reset = dafka::ConsumerOptions::Reset;

namespace {

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// zstored with CURVE, its tower at T and its store at T+2; alice and bob
// allowed, mallory not.
struct Fixture {
  CurveKeys keys{{"alice", "bob", "mallory"}, {"alice", "bob"}};
  std::uint16_t tower_port = zstore::testing::free_port_range(3);
  HttpZstored zstored{args()};

  Fixture() { BOOST_REQUIRE_MESSAGE(zstored.server.start(), zstored.server.log()); }
  std::vector<std::string> args() const {
    auto a = keys.server_args();
    a.insert(a.end(), {"--tower-port", std::to_string(tower_port), "--dafka-port", std::to_string(tower_port + 2),
                       "--beacon-interval-ms", "100"});
    return a;
  }
  std::string tower() const { return "tcp://127.0.0.1:" + std::to_string(tower_port); }
  dafka::NodeOptions node(const SocketSecurity& security) const {
    dafka::NodeOptions o;
    o.towers = {tower()};
    o.beacon_interval = 100ms;
    o.security = security;
    return o;
  }
  dafka::ProducerOptions producer(const SocketSecurity& security) const {
    dafka::ProducerOptions o;
    o.node = node(security);
    o.head_interval = 200ms;
    return o;
  }
  dafka::ConsumerOptions consumer(const SocketSecurity& security) const {
    dafka::ConsumerOptions o;
    o.node = node(security);
    o.reset = Reset::kEarliest;
    o.fetch_retry = 200ms;
    o.get_heads_retry = 300ms;
    return o;
  }
  double metric(const std::string& name) { return zstore::testing::metric(zstored.metrics(), name); }

  // An intruder's records are never stored: its flush fails, its handshake
  // error says why (containing `reason`), the store's count is unchanged and
  // an allowed consumer of the topic sees only alice's marker.
  void expect_nothing_stored(const SocketSecurity& intruder, const std::string& topic, const std::string& reason) {
    double stored = metric("zstore_dafka_records_stored_total");
    dafka::Producer p(producer(intruder));
    for (int i = 0; i < 3; ++i) p.publish(topic, "intruder");
    BOOST_TEST(!p.flush(2s));
    BOOST_REQUIRE(wait_until([&] { return !p.handshake_error().empty(); }, 10s));
    BOOST_TEST(p.handshake_error().find(reason) != std::string::npos, p.handshake_error());
    dafka::Producer ally(producer(keys.as("alice")));
    ally.publish(topic, "marker");
    BOOST_REQUIRE(ally.flush(15s));
    dafka::Consumer reader(consumer(keys.as("bob")));
    reader.subscribe({topic});
    auto first = reader.poll(15s);
    BOOST_REQUIRE(first);
    BOOST_TEST(first->content == "marker");
    BOOST_TEST(!reader.poll(1s).has_value());
    BOOST_TEST(metric("zstore_dafka_records_stored_total") == stored + 1);
  }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(allowed_keys_produce_store_and_consume_end_to_end, Fixture) {
  dafka::Producer producer(this->producer(keys.as("alice")));
  for (int i = 0; i < 5; ++i) producer.publish("secure", "r" + std::to_string(i));
  BOOST_REQUIRE_MESSAGE(producer.flush(15s), zstored.server.log());  // ACKed by the store
  BOOST_TEST(producer.handshake_error() == "");
  BOOST_TEST(metric("zstore_dafka_records_stored_total") == 5);

  // An earliest consumer asks the store for its heads (GET-HEADS, DIRECT-HEAD)
  // and FETCHes everything from it.
  dafka::Consumer consumer(this->consumer(keys.as("bob")));
  consumer.subscribe({"secure"});
  for (int i = 0; i < 5; ++i) {
    auto r = consumer.poll(15s);
    BOOST_REQUIRE_MESSAGE(r, "record " << i << " missing; " << zstored.server.log());
    BOOST_TEST(r->offset == static_cast<std::uint64_t>(i));
    BOOST_TEST(r->content == "r" + std::to_string(i));
    BOOST_TEST(r->partition == producer.address());
  }
  BOOST_TEST(metric("zstore_dafka_fetches_served_total") > 0);
  BOOST_TEST(consumer.handshake_error() == "");
  BOOST_TEST(zstored.server.log().find("(key " + keys.clients.at("alice").public_key + ")") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(plaintext_producer_gets_nothing_stored, Fixture) {
  expect_nothing_stored(SocketSecurity{}, "plain", "security mechanism mismatch");
}

BOOST_FIXTURE_TEST_CASE(unknown_key_gets_nothing_stored_and_is_counted, Fixture) {
  expect_nothing_stored(keys.as("mallory"), "unknown", "refused our key");
  BOOST_TEST(metric("zstore_auth_failures_total{port=\"tower-beacons\"}") > 0);
  BOOST_TEST(metric("zstore_auth_failures_total{port=\"tower-peers\"}") > 0);
  BOOST_TEST(zstored.server.log().find("refused unknown client key " + keys.clients.at("mallory").public_key) !=
             std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(wrong_server_key_is_a_clear_error, Fixture) {
  SocketSecurity wrong = keys.as("alice");
  wrong.server_key = keys.clients.at("mallory").public_key;
  expect_nothing_stored(wrong, "wrong-server-key", "server key mismatch");
}

BOOST_FIXTURE_TEST_CASE(key_removed_before_sighup_gets_nothing_stored, Fixture) {
  {
    dafka::Producer before(producer(keys.as("bob")));
    before.publish("removed", "allowed");
    BOOST_REQUIRE(before.flush(15s));
  }
  keys.forbid("bob");
  zstored.server.kill(SIGHUP);
  BOOST_REQUIRE(wait_until([&] { return count(zstored.server.log(), "CURVE allow list: 1 client key(s)") == 1; }));
  double stored = metric("zstore_dafka_records_stored_total");
  dafka::Producer after(producer(keys.as("bob")));
  after.publish("removed", "refused");
  BOOST_TEST(!after.flush(2s));
  BOOST_REQUIRE(wait_until([&] { return !after.handshake_error().empty(); }, 10s));
  BOOST_TEST(after.handshake_error().find("refused our key") != std::string::npos, after.handshake_error());
  BOOST_TEST(metric("zstore_dafka_records_stored_total") == stored);
}

// A producer whose key is removed while it runs: the store leaves its
// publisher and the tower ends its connection, so its next records are not
// stored and its reconnection is refused; alice, still allowed, reconnects
// by herself and goes on.
BOOST_FIXTURE_TEST_CASE(a_removed_key_loses_its_open_connections, Fixture) {
  dafka::Producer bob(producer(keys.as("bob")));
  bob.publish("revoked", "allowed");
  BOOST_REQUIRE(bob.flush(15s));
  dafka::Producer alice(producer(keys.as("alice")));
  alice.publish("kept", "before");
  BOOST_REQUIRE(alice.flush(15s));
  keys.forbid("bob");
  zstored.server.kill(SIGHUP);
  BOOST_REQUIRE(
      wait_until([&] { return zstored.server.log().find("Dafka: leaving the publisher") != std::string::npos; }));
  BOOST_TEST(metric("zstore_auth_key_revocations_total") == 1);
  BOOST_TEST(metric("zstore_dafka_peers") == 1);  // alice's publisher, not bob's any more
  double stored = metric("zstore_dafka_records_stored_total");
  bob.publish("revoked", "after");
  BOOST_TEST(!bob.flush(2s));
  BOOST_REQUIRE(wait_until([&] { return !bob.handshake_error().empty(); }, 10s));
  BOOST_TEST(bob.handshake_error().find("refused our key") != std::string::npos, bob.handshake_error());
  alice.publish("kept", "after");
  BOOST_REQUIRE_MESSAGE(alice.flush(15s), zstored.server.log());
  BOOST_TEST(metric("zstore_dafka_records_stored_total") == stored + 1);
}

BOOST_FIXTURE_TEST_CASE(beacons_with_a_key_not_allowed_or_none_are_not_connected_to, Fixture) {
  // alice may beacon, but announces mallory's key, then none: the store must
  // not connect to either publisher.
  zmq::context_t ctx;
  zmq::socket_t beacon(ctx, zmq::socket_type::pub);
  beacon.set(zmq::sockopt::linger, 0);
  keys.as("alice").as_client(beacon);
  beacon.connect(tower());
  std::string uuid = "0123456789ABCDEF0123456789ABCDEF", other = "FEDCBA9876543210FEDCBA9876543210";
  std::string mallory = keys.clients.at("mallory").public_key;
  auto announce = [&](const std::vector<std::string>& frames) {
    for (std::size_t i = 0; i < frames.size(); ++i) {
      beacon.send(zmq::buffer(frames[i]), i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
    }
  };
  std::string log;
  BOOST_REQUIRE(wait_until(
      [&] {
        announce({"B", uuid, "127.0.0.1", "1", mallory});
        announce({"B", other, "127.0.0.1", "2"});
        log = zstored.server.log();
        return log.find("its key is not in --curve-allow") != std::string::npos &&
               log.find("its beacon carries no CURVE key") != std::string::npos;
      },
      15s));
  BOOST_TEST(log.find("not connecting to tcp://127.0.0.1:1 (key " + mallory + ")") != std::string::npos, log);
  BOOST_TEST(metric("zstore_dafka_peers_refused_total") >= 2);
  BOOST_TEST(metric("zstore_dafka_peers") == 0);  // announced, never connected
}

BOOST_FIXTURE_TEST_CASE(a_second_store_sharing_the_certificate_stores_too, Fixture) {
  // It beacons to our tower and connects to the producer and to the first
  // store with the keys their beacons carry.
  HttpZstored second{[&] {
    auto a = keys.server_args();
    a.insert(a.end(), {"--tower-port", "0", "--towers", tower(), "--dafka-port",
                       std::to_string(zstore::testing::free_port()), "--beacon-interval-ms", "100"});
    return a;
  }()};
  BOOST_REQUIRE_MESSAGE(second.server.start(), second.server.log());
  BOOST_REQUIRE(wait_until([&] { return zstore::testing::metric(second.metrics(), "zstore_dafka_peers") >= 1; }, 15s));
  dafka::Producer producer(this->producer(keys.as("alice")));
  for (int i = 0; i < 3; ++i) producer.publish("both", "r" + std::to_string(i));
  BOOST_REQUIRE(producer.flush(15s));
  BOOST_REQUIRE_MESSAGE(
      wait_until([&] { return zstore::testing::metric(second.metrics(), "zstore_dafka_records_stored_total") == 3; },
                 15s),
      second.server.log());
  // flush() returns at the first store's ACK: the other may store later
  // (it may even fetch the records after the producer's next HEAD).
  BOOST_TEST(wait_until([&] { return metric("zstore_dafka_records_stored_total") == 3; }, 15s));
  BOOST_TEST(second.server.log().find("(key " + keys.server.public_key + ")") != std::string::npos);
  BOOST_TEST(second.server.log().find("not connecting") == std::string::npos, second.server.log());
}

BOOST_FIXTURE_TEST_CASE(cli_consumes_with_keys_and_fails_clearly_without_the_right_ones, Fixture) {
  dafka::Producer producer(this->producer(keys.as("alice")));
  producer.publish("cli", "payload-7f3a");  // a word no error message has
  BOOST_REQUIRE(producer.flush(15s));
  zstore::testing::TempDir logs;
  int n = 0;
  auto consume = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"dafka", "consume", "cli", "--tower", tower(), "--from-beginning", "--count", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    zstore::testing::Process p(zstore::testing::bin_path("zstore-cli"), args, logs.path() / std::to_string(++n));
    auto start = std::chrono::steady_clock::now();
    int code = p.wait(30s);
    return std::tuple{code, p.log(), std::chrono::steady_clock::now() - start};
  };
  auto [ok, ok_log, ok_time] = consume(
      {"--timeout-ms", "15000", "--curve-cert", keys.file("bob.key_secret"), "--server-key", keys.file("server.key")});
  BOOST_TEST(ok == 0, ok_log);
  BOOST_TEST(ok_log.find("payload-7f3a") != std::string::npos, ok_log);

  auto [wrong, wrong_log, wrong_time] = consume(
      {"--timeout-ms", "15000", "--curve-cert", keys.file("bob.key_secret"), "--server-key", keys.file("mallory.key")});
  BOOST_TEST(wrong == 1, wrong_log);
  BOOST_TEST(wrong_log.find("server key mismatch") != std::string::npos, wrong_log);
  BOOST_TEST(wrong_time < 15s);  // the error, not the time-out
  BOOST_TEST(wrong_log.find("payload-7f3a") == std::string::npos, wrong_log);

  // No --timeout-ms: without the handshake check this would run until killed.
  auto [unknown, unknown_log, unknown_time] =
      consume({"--curve-cert", keys.file("mallory.key_secret"), "--server-key", keys.file("server.key")});
  BOOST_TEST(unknown == 1, unknown_log);
  BOOST_TEST(unknown_log.find("refused our key") != std::string::npos, unknown_log);
  BOOST_TEST(unknown_log.find("payload-7f3a") == std::string::npos, unknown_log);
}

BOOST_FIXTURE_TEST_CASE(a_producer_serves_only_zstored_and_announced_peers, Fixture) {
  dafka::Producer producer(this->producer(keys.as("alice")));
  BOOST_REQUIRE(producer.wait_connected(15s));
  dafka::ConsumerOptions o = consumer(keys.as("bob"));
  o.reset = Reset::kLatest;  // records straight from the producer's publisher
  dafka::Consumer live(o);
  live.subscribe({"direct"});
  BOOST_REQUIRE(live.wait_connected(15s));

  // mallory knows the producer's endpoint and key but never passed a tower.
  zmq::context_t ctx;
  zmq::socket_t intruder(ctx, zmq::socket_type::sub);
  intruder.set(zmq::sockopt::linger, 0);
  SocketSecurity{keys.clients.at("mallory"), keys.clients.at("alice").public_key}.as_client(intruder);
  intruder.set(zmq::sockopt::subscribe, "");
  intruder.connect(producer.endpoint());

  std::optional<dafka::Record> got;
  BOOST_REQUIRE(wait_until(
      [&] {
        producer.publish("direct", "r");
        got = live.poll(200ms);
        return got.has_value();
      },
      15s));
  BOOST_TEST(got->partition == producer.address());
  zmq::message_t msg;
  intruder.set(zmq::sockopt::rcvtimeo, 1000);
  BOOST_TEST(!intruder.recv(msg).has_value());
}
