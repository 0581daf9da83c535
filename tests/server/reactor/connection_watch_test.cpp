// ConnectionWatch against real libzmq sockets on 127.0.0.1 port 0: the cap
// per port and in total, the counts following closed connections, a silent
// connection's slot going to a new one, and the byte budget ending a
// subscriber that does not read.
#include "server/reactor/connection_watch.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>

#include <string>
#include <thread>
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

// A TCP connection that sends a whole ZMTP 3.0 NULL greeting (so it is no
// silent connection a newer one could evict) and nothing after.
int greeted_connect(std::uint16_t port) {
  int fd = tcp_connect(port);
  unsigned char greeting[64] = {0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 3, 0, 'N', 'U', 'L', 'L'};
  BOOST_REQUIRE_EQUAL(::send(fd, greeting, sizeof greeting, 0), static_cast<ssize_t>(sizeof greeting));
  return fd;
}

// Whether the server ended fd's connection (EOF within the deadline).
bool ended(int fd) {
  return wait_until(
      [&] {
        char b;
        return ::recv(fd, &b, 1, MSG_DONTWAIT) == 0;
      },
      5s);
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
  int a1 = greeted_connect(port_of(a.socket)), a2 = greeted_connect(port_of(a.socket));
  BOOST_REQUIRE(wait_until([&] { return a.port->connections.load() == 2; }));
  int a3 = tcp_connect(port_of(a.socket));  // over the port's cap
  BOOST_CHECK(ended(a3));
  BOOST_CHECK_EQUAL(a.port->refused.load(), 1u);
  int b1 = greeted_connect(port_of(b.socket));
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

// An idle TCP flood holding every slot: a new connection takes the slot of
// the oldest that has sent no ZMTP greeting for kSilentGrace, never of a
// ZeroMQ peer's.
BOOST_AUTO_TEST_CASE(at_the_cap_the_oldest_silent_connection_gives_its_slot_to_a_new_one) {
  zmq::context_t ctx;
  ConnectionWatch watch(ctx, {3, 0});
  Bound a(ctx, watch, "a", zmq::socket_type::router);
  watch.start();
  const std::string ep = "tcp://127.0.0.1:" + std::to_string(port_of(a.socket));
  int silent1 = tcp_connect(port_of(a.socket));
  zmq::socket_t peer(ctx, zmq::socket_type::dealer);  // greets at once
  peer.set(zmq::sockopt::linger, 0);
  peer.connect(ep);
  int silent2 = tcp_connect(port_of(a.socket));
  BOOST_REQUIRE(wait_until([&] { return a.port->connections.load() == 3; }));
  // The grace is what is tested: until it passed no silent one is evicted.
  std::this_thread::sleep_for(ConnectionWatch::kSilentGrace + 200ms);
  zmq::socket_t late(ctx, zmq::socket_type::dealer);
  late.set(zmq::sockopt::linger, 0);
  late.connect(ep);
  BOOST_CHECK(ended(silent1));  // the oldest silent one, not the peer before it
  BOOST_CHECK(wait_until([&] { return a.port->evicted.load() == 1; }));
  BOOST_CHECK_EQUAL(a.port->refused.load(), 0u);
  BOOST_CHECK_EQUAL(a.port->connections.load(), 3u);
  // Both ZeroMQ peers are still connected: the router hears each.
  for (zmq::socket_t* s : {&peer, &late}) s->send(zmq::str_buffer("hi"), zmq::send_flags::none);
  int heard = 0;
  BOOST_CHECK(wait_until([&] {
    zmq::message_t m;
    while (a.socket.recv(m, zmq::recv_flags::dontwait)) heard += m.to_string_view() == "hi" ? 1 : 0;
    return heard == 2;
  }));
  // silent2 is still open: what it reads (the server's greeting) ends in
  // EAGAIN, not EOF.
  char b[256];
  ssize_t n;
  while ((n = ::recv(silent2, b, sizeof b, MSG_DONTWAIT)) > 0) {
  }
  BOOST_CHECK_EQUAL(n, -1);
  ConnectionWatch::unwatch(a.socket);
  watch.stop();
  for (int fd : {silent1, silent2}) ::close(fd);
}

// In a flood's first second every slot is held by a silent connection
// younger than the grace. A ZeroMQ peer arriving then, seen by the watch
// once it has greeted (and perhaps sent its request), takes the slot of the
// oldest of them at once: refused, it would have lost that request.
BOOST_AUTO_TEST_CASE(a_peer_that_greeted_takes_the_slot_of_a_young_silent_connection) {
  zmq::context_t ctx;
  ConnectionWatch watch(ctx, {2, 0});
  Bound a(ctx, watch, "a", zmq::socket_type::router);
  watch.start();
  const auto started = std::chrono::steady_clock::now();
  int silent1 = tcp_connect(port_of(a.socket));
  int silent2 = tcp_connect(port_of(a.socket));
  BOOST_REQUIRE(wait_until([&] { return a.port->connections.load() == 2; }));
  zmq::socket_t peer(ctx, zmq::socket_type::dealer);
  peer.set(zmq::sockopt::linger, 0);
  peer.connect("tcp://127.0.0.1:" + std::to_string(port_of(a.socket)));
  peer.send(zmq::str_buffer("hi"), zmq::send_flags::none);
  // Answered before either silent connection is past the grace: the
  // request reached the router and the connection it came on stayed up (a
  // peer refused before it greeted keeps its request queued, reconnects and
  // sends it again).
  const auto deadline = started + ConnectionWatch::kSilentGrace - 100ms;
  bool answered = false;
  while (!answered && std::chrono::steady_clock::now() < deadline) {
    zmq::message_t id, m;
    if (a.socket.recv(id, zmq::recv_flags::dontwait) && a.socket.recv(m, zmq::recv_flags::none)) {
      a.socket.send(id, zmq::send_flags::sndmore);
      a.socket.send(zmq::str_buffer("ok"), zmq::send_flags::none);
    }
    answered = peer.recv(m, zmq::recv_flags::dontwait).has_value();
    if (!answered) std::this_thread::sleep_for(1ms);  // polls non-blocking receives
  }
  BOOST_CHECK(answered);
  BOOST_CHECK(ended(silent1));  // the oldest silent one
  BOOST_CHECK_EQUAL(a.port->evicted.load(), 1u);
  ConnectionWatch::unwatch(a.socket);
  watch.stop();
  for (int fd : {silent1, silent2}) ::close(fd);
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
