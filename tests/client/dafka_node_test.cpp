// DafkaNode discovery: tower beacons connect peers, silence disconnects them,
// a node ignores its own beacon, tower endpoints are parsed strictly.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>

#include <zmq.hpp>

#include "client/dafka_node.h"
#include "protocol/beacon.h"
#include "protocol/dafka_codec.h"
#include "protocol/endpoint.h"
#include "tests/client/dafka_fake_peers.h"
#include "tests/support/test_support.h"

namespace dafka = zstore::client::dafka;
namespace wire = zstore::protocol::dafka;
using zstore::testing::FakeTower;
using zstore::testing::wait_until;
using namespace std::chrono_literals;

namespace {

// A handler that does nothing but count what it is given.
struct Counting : dafka::DafkaNode::Handler {
  std::atomic<int> messages{0};
  void on_message(wire::Message) override { ++messages; }
  void on_subscription(bool, std::string_view) override {}
  void on_wakeup() override {}
  dafka::Clock::time_point on_timer(dafka::Clock::time_point now) override { return now + 1h; }
};

dafka::NodeOptions fast(const FakeTower& tower) {
  dafka::NodeOptions o;
  o.towers = {tower.endpoint()};
  o.beacon_interval = 50ms;
  o.peer_timeout = 300ms;
  return o;
}

}  // namespace

BOOST_AUTO_TEST_CASE(tower_endpoints_are_port_and_port_plus_one) {
  auto [xsub, xpub] = dafka::tower_endpoints("tcp://example.org:5580");
  BOOST_TEST(xsub == "tcp://example.org:5580");
  BOOST_TEST(xpub == "tcp://example.org:5581");
  for (const char* bad : {"example.org:5580", "tcp://:5580", "tcp://host", "tcp://host:0", "tcp://host:65535",
                          "tcp://host:x1", "udp://host:5580"})
    BOOST_CHECK_THROW(dafka::tower_endpoints(bad), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(a_lone_node_ignores_its_own_beacon) {
  FakeTower tower;
  Counting h;
  dafka::DafkaNode node(fast(tower));
  node.start(h);
  BOOST_TEST(wait_until([&] { return tower.beacons_seen() >= 3; }));
  BOOST_TEST(node.peer_count() == 0u);
  BOOST_TEST(wire::is_valid_address(node.address()));
}

BOOST_AUTO_TEST_CASE(peers_connect_on_beacons_and_disconnect_after_silence) {
  FakeTower tower;
  Counting ha, hb;
  dafka::DafkaNode a(fast(tower));
  a.start(ha);
  auto b = std::make_unique<dafka::DafkaNode>(fast(tower));
  b->start(hb);
  BOOST_TEST(wait_until([&] { return a.peer_count() == 1 && b->peer_count() == 1; }));
  b.reset();
  BOOST_TEST(wait_until([&] { return a.peer_count() == 0; }, 5s));
}

BOOST_AUTO_TEST_CASE(creation_with_an_unbindable_endpoint_throws) {
  FakeTower tower;
  auto o = fast(tower);
  o.bind_endpoint = "tcp://256.1.1.1:*";
  BOOST_CHECK_THROW(dafka::DafkaNode{o}, zmq::error_t);
}

BOOST_AUTO_TEST_CASE(a_peer_restarted_on_the_same_endpoint_stays_connected_when_the_old_uuid_expires) {
  namespace beacon = zstore::protocol::beacon;
  FakeTower tower;
  Counting h;
  dafka::DafkaNode node(fast(tower));
  node.subscribe("M");
  node.start(h);

  zmq::context_t ctx(1);
  zmq::socket_t pub(ctx, zmq::socket_type::xpub), beacons(ctx, zmq::socket_type::pub);
  pub.set(zmq::sockopt::linger, 0);
  beacons.set(zmq::sockopt::linger, 0);
  pub.bind("tcp://127.0.0.1:*");
  std::string ep = pub.get(zmq::sockopt::last_endpoint);
  auto port = zstore::protocol::parse_tcp_endpoint(ep).value().port;
  beacons.connect(tower.endpoint());
  auto announce = [&](const std::string& uuid) {
    auto frames = beacon::encode(beacon::NodeBeacon{uuid, "127.0.0.1", port});
    for (std::size_t i = 0; i < frames.size(); ++i)
      beacons.send(zmq::buffer(frames[i]), i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  };
  const std::string old_uuid(32, 'A'), new_uuid(32, 'B');
  BOOST_TEST(wait_until([&] {
    announce(old_uuid);
    announce(new_uuid);
    return node.peer_count() == 2;
  }));
  BOOST_TEST(wait_until([&] {
    announce(new_uuid);
    return node.peer_count() == 1;
  }));
  auto record = wire::encode(wire::Record{"t", new_uuid, "t", 0, "x"});
  BOOST_TEST(wait_until([&] {
    announce(new_uuid);
    pub.send(zmq::buffer(record[0]), zmq::send_flags::sndmore);
    pub.send(zmq::buffer(record[1]), zmq::send_flags::none);
    return h.messages.load() > 0;
  }));
}
