// BoundEndpoint over real sockets: dropping the connections unbinds the
// endpoint and counts it in the gauge; retry() binds it again once the port
// is free (not while another socket holds it), clients reconnect by
// themselves, and an endpoint destroyed unbound no longer counts.
#include "server/reactor/bound_endpoint.h"

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>

#include <zmq.hpp>

#include "tests/support/test_support.h"

using zstore::server::BoundEndpoint;
using zstore::testing::wait_until;
using namespace std::chrono_literals;

namespace {

// True once a message published on pub reaches sub (sent again until then:
// a PUB drops what it sends before the subscription arrives).
bool delivers(zmq::socket_t& pub, zmq::socket_t& sub) {
  return wait_until([&] {
    pub.send(zmq::str_buffer("m"), zmq::send_flags::dontwait);
    zmq::message_t msg;
    return sub.recv(msg, zmq::recv_flags::dontwait).has_value();
  });
}

struct Fixture {
  zmq::context_t ctx;
  zmq::socket_t pub{ctx, zmq::socket_type::pub};
  zmq::socket_t sub{ctx, zmq::socket_type::sub};
  std::atomic<std::int64_t> unbound{0};
  std::optional<BoundEndpoint> ep;

  Fixture() {
    for (auto* s : {&pub, &sub}) s->set(zmq::sockopt::linger, 0);
    pub.bind("tcp://127.0.0.1:0");
    ep.emplace(&pub, "test publisher", &unbound);
    sub.set(zmq::sockopt::subscribe, "");
    sub.set(zmq::sockopt::reconnect_ivl, 20);
    sub.connect(ep->endpoint());
  }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(dropped_connections_come_back_once_bound_again, Fixture) {
  BOOST_TEST(ep->endpoint().find("tcp://127.0.0.1:") == 0u);
  BOOST_TEST(ep->endpoint() != "tcp://127.0.0.1:0");  // the port as bound
  BOOST_REQUIRE(delivers(pub, sub));
  BOOST_TEST(ep->retry());  // bound: nothing to do
  BOOST_TEST(unbound.load() == 0);

  ep->drop_connections();
  BOOST_TEST(ep->unbound());
  BOOST_TEST(unbound.load() == 1);
  ep->drop_connections();  // already unbound: counted once
  BOOST_TEST(unbound.load() == 1);

  // Another socket takes the port: retry() fails and keeps counting it.
  zmq::socket_t thief(ctx, zmq::socket_type::pub);
  thief.set(zmq::sockopt::linger, 0);
  BOOST_REQUIRE(wait_until([&] {
    try {
      thief.bind(ep->endpoint());
      return true;
    } catch (const zmq::error_t&) {
      return false;  // the old listener is still closing
    }
  }));
  BOOST_TEST(!ep->retry());
  BOOST_TEST(ep->unbound());
  BOOST_TEST(unbound.load() == 1);

  thief.close();
  BOOST_REQUIRE(wait_until([&] { return ep->retry(); }));
  BOOST_TEST(!ep->unbound());
  BOOST_TEST(unbound.load() == 0);
  zmq::message_t stale;
  while (sub.recv(stale, zmq::recv_flags::dontwait)) {
  }
  BOOST_TEST(delivers(pub, sub));  // the subscriber reconnected by itself
}

BOOST_FIXTURE_TEST_CASE(an_endpoint_destroyed_unbound_no_longer_counts, Fixture) {
  ep->drop_connections();
  BOOST_TEST(unbound.load() == 1);
  BoundEndpoint moved = std::move(*ep);  // the count moves with it
  ep.reset();
  BOOST_TEST(unbound.load() == 1);
  BOOST_TEST(moved.unbound());
  { BoundEndpoint gone = std::move(moved); }
  BOOST_TEST(unbound.load() == 0);
}
