// ConnectionWatch against real libzmq sockets on 127.0.0.1 port 0: the cap
// per port and in total, the counts following closed connections, and the
// byte budget ending a subscriber that does not read.
#include "server/reactor/connection_watch.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "tools/harness/harness.h"

using namespace zstore::server;
using zstore::testing::wait_until;
using namespace std::chrono_literals;

namespace {

std::uint16_t port_of(zmq::socket_t& s) {
  std::string ep = s.get(zmq::sockopt::last_endpoint);
  return static_cast<std::uint16_t>(std::stoi(ep.substr(ep.rfind(':') + 1)));
}

int tcp_connect(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  BOOST_REQUIRE_EQUAL(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  return fd;
}

// Whether the server ended fd's connection (EOF within the deadline).
bool ended(int fd) {
  return wait_until([&] {
    char b;
    return ::recv(fd, &b, 1, MSG_DONTWAIT) == 0;
  }, 5s);
}

struct Bound {
  zmq::socket_t socket;
  WatchedPort* port = nullptr;
  Bound(zmq::context_t& ctx, ConnectionWatch& watch, const std::string& name, zmq::socket_type type,
        std::uint64_t budget = 0)
      : socket(ctx, type) {
    socket.set(zmq::sockopt::linger, 0);
    port = watch.watch(socket, name, budget);
    socket.bind("tcp://127.0.0.1:0");
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(connections_over_the_port_cap_are_ended_and_counted) {
  zmq::context_t ctx;
  ConnectionWatch watch(ctx, {2, 3});
  Bound a(ctx, watch, "a", zmq::socket_type::router);
  Bound b(ctx, watch, "b", zmq::socket_type::router);
  watch.start();
  int a1 = tcp_connect(port_of(a.socket)), a2 = tcp_connect(port_of(a.socket));
  BOOST_REQUIRE(wait_until([&] { return a.port->connections.load() == 2; }));
  int a3 = tcp_connect(port_of(a.socket));  // over the port's cap
  BOOST_CHECK(ended(a3));
  BOOST_CHECK_EQUAL(a.port->refused.load(), 1u);
  int b1 = tcp_connect(port_of(b.socket));
  BOOST_REQUIRE(wait_until([&] { return b.port->connections.load() == 1; }));
  int b2 = tcp_connect(port_of(b.socket));  // over the total
  BOOST_CHECK(ended(b2));
  BOOST_CHECK_EQUAL(b.port->refused.load(), 1u);
  BOOST_CHECK_EQUAL(watch.total_connections(), 3u);
  // A closed connection frees its slot.
  ::close(a1);
  BOOST_CHECK(wait_until([&] { return a.port->connections.load() == 1; }));
  int a4 = tcp_connect(port_of(a.socket));
  BOOST_CHECK(wait_until([&] { return a.port->connections.load() == 2; }));
  BOOST_CHECK_EQUAL(a.port->refused.load(), 1u);
  ConnectionWatch::unwatch(a.socket);
  ConnectionWatch::unwatch(b.socket);
  watch.stop();
  for (int fd : {a2, a3, a4, b1, b2}) ::close(fd);
}

BOOST_AUTO_TEST_CASE(subscriber_more_than_its_budget_behind_is_dropped) {
  zmq::context_t ctx;
  ConnectionWatch watch(ctx, {0, 0});
  Bound pub(ctx, watch, "pub", zmq::socket_type::pub, 1 << 20);
  pub.socket.set(zmq::sockopt::sndhwm, 0);
  watch.start();
  zmq::socket_t sub(ctx, zmq::socket_type::sub);
  sub.set(zmq::sockopt::rcvbuf, 4096);
  sub.set(zmq::sockopt::rcvhwm, 1);
  sub.set(zmq::sockopt::linger, 0);
  sub.set(zmq::sockopt::subscribe, "");
  sub.connect("tcp://127.0.0.1:" + std::to_string(port_of(pub.socket)));
  const std::string value(64 << 10, 'v');
  // Publishes until the subscription is in and the subscriber, reading
  // nothing, has fallen 1 MiB behind (bounded: 64 MiB at most).
  bool dropped = false;
  for (int i = 0; i < 1024 && !dropped; ++i) {
    (void)pub.socket.send(zmq::buffer(value), zmq::send_flags::dontwait);
    pub.port->published_bytes.fetch_add(value.size());
    dropped = wait_until([&] { return pub.port->slow_dropped.load() != 0; }, 2ms);
  }
  BOOST_CHECK(dropped);
  BOOST_CHECK(wait_until([&] { return pub.port->connections.load() == 0; }));
  ConnectionWatch::unwatch(pub.socket);
  watch.stop();
}
