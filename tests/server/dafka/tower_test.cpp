// The embedded Dafka tower of zstored, against scripted raw sockets: the
// welcome message, node beacons turned into tower beacons (empty host filled
// with the peer address, old 3-frame beacons), and bad beacons counted,
// dropped and survived.
#include <boost/test/unit_test.hpp>

#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "protocol/beacon.h"
#include "tests/ops/ops_support.h"
#include "tests/support/zstored.h"

using namespace std::chrono_literals;
using zstore::testing::Zstored;
namespace beacon = zstore::protocol::beacon;

namespace {

void send_frames(zmq::socket_t& socket, const std::vector<std::string>& frames) {
  for (std::size_t i = 0; i < frames.size(); ++i) {
    socket.send(zmq::buffer(frames[i]), i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
}

struct Tower {
  zmq::context_t ctx;
  std::uint16_t port = zstore::testing::free_port_range(2);
  std::uint16_t http_port = zstore::testing::free_port();
  Zstored zstored{
      {"--dafka-port", "0", "--tower-port", std::to_string(port), "--http-port", std::to_string(http_port)}};
  zmq::socket_t pub{ctx, zmq::socket_type::pub};
  zmq::socket_t sub{ctx, zmq::socket_type::sub};

  Tower() {
    BOOST_REQUIRE_MESSAGE(zstored.start(), "zstored did not start: " + zstored.log());
    pub.set(zmq::sockopt::linger, 0);
    sub.set(zmq::sockopt::linger, 0);
    sub.set(zmq::sockopt::subscribe, "B");
    sub.set(zmq::sockopt::subscribe, "W");
    pub.connect("tcp://127.0.0.1:" + std::to_string(port));
    sub.connect("tcp://127.0.0.1:" + std::to_string(port + 1));
  }

  std::optional<std::vector<std::string>> receive(std::chrono::milliseconds timeout) {
    zmq::pollitem_t item{sub.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, timeout) <= 0) return std::nullopt;
    std::vector<zmq::message_t> parts;
    if (!zmq::recv_multipart(sub, std::back_inserter(parts))) return std::nullopt;
    std::vector<std::string> out;
    for (auto& p : parts) out.push_back(p.to_string());
    return out;
  }

  // Sends frames until a tower beacon for uuid arrives (slow joiners) or 10 s pass.
  std::optional<beacon::TowerBeacon> beacon_for(const std::vector<std::string>& frames, const std::string& uuid) {
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
      send_frames(pub, frames);
      while (auto m = receive(50ms)) {
        std::vector<std::string_view> views(m->begin(), m->end());
        auto b = beacon::decode_tower_beacon(views);
        if (b && b->uuid == uuid) return *b;
      }
    }
    return std::nullopt;
  }

  double metric(const std::string& name) {
    return zstore::testing::metric(zstore::testing::scrape_metrics(http_port), name);
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(new_subscriber_gets_the_welcome_message) {
  Tower t;
  bool welcomed = false;
  for (int i = 0; i < 100 && !welcomed; ++i) {
    auto m = t.receive(100ms);
    welcomed = m && m->size() == 1 && (*m)[0] == "W";
  }
  BOOST_CHECK(welcomed);
}

BOOST_AUTO_TEST_CASE(empty_host_is_filled_with_the_peer_address) {
  Tower t;
  auto b = t.beacon_for(beacon::encode(beacon::NodeBeacon{"NODE-A", "", 4321}), "NODE-A");
  BOOST_REQUIRE(b);
  BOOST_CHECK_EQUAL(b->endpoint, "tcp://127.0.0.1:4321");
}

BOOST_AUTO_TEST_CASE(given_host_is_kept) {
  Tower t;
  auto b = t.beacon_for(beacon::encode(beacon::NodeBeacon{"NODE-B", "node-b.example", 5000}), "NODE-B");
  BOOST_REQUIRE(b);
  BOOST_CHECK_EQUAL(b->endpoint, "tcp://node-b.example:5000");
}

BOOST_AUTO_TEST_CASE(old_three_frame_beacon_is_forwarded) {
  Tower t;
  auto b = t.beacon_for({"B", "NODE-C", "6000"}, "NODE-C");
  BOOST_REQUIRE(b);
  BOOST_CHECK_EQUAL(b->endpoint, "tcp://127.0.0.1:6000");
}

BOOST_AUTO_TEST_CASE(malformed_beacons_are_dropped_and_the_tower_keeps_working) {
  Tower t;
  // A beacon's round trip shows the tower's subscription reached our PUB:
  // from then on the PUB sends it everything below, in order.
  BOOST_REQUIRE(t.beacon_for(beacon::encode(beacon::NodeBeacon{"NODE-0", "", 6999}), "NODE-0"));
  const double malformed_before = t.metric("zstore_tower_malformed_total");
  BOOST_CHECK_EQUAL(malformed_before, 0);
  const int rounds = 50;
  for (int i = 0; i < rounds; ++i) {
    send_frames(t.pub, {"B"});
    send_frames(t.pub, {"B", "X", "host", "notaport"});
    send_frames(t.pub, {"B", "", "host", "1"});
    send_frames(t.pub, {"B", "X", "host", "70000", "extra"});
    send_frames(t.pub, {"Bxxxxxxxxxxxxxxxxxxx", std::string(300, 'u'), "1"});
  }
  // NODE-D follows the burst on the same connection: once it is forwarded,
  // the tower has read (and dropped) the whole burst.
  auto b = t.beacon_for(beacon::encode(beacon::NodeBeacon{"NODE-D", "", 7000}), "NODE-D");
  BOOST_REQUIRE(b);
  BOOST_CHECK_EQUAL(b->endpoint, "tcp://127.0.0.1:7000");
  const double expected = malformed_before + 5 * rounds;
  zstore::testing::wait_until([&] { return t.metric("zstore_tower_malformed_total") >= expected; },
                              std::chrono::seconds(5));
  BOOST_CHECK_EQUAL(t.metric("zstore_tower_malformed_total"), expected);
  // The counter may trail the forward we just saw by a loop turn.
  BOOST_CHECK(zstore::testing::wait_until([&] { return t.metric("zstore_tower_beacons_forwarded_total") >= 2; },
                                          std::chrono::seconds(5)));
  BOOST_CHECK(t.zstored.process()->running());
}
