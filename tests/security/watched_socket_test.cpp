// A stopped HandshakeMonitor and a closed WatchedSocket never block the
// context's I/O thread. libzmq sends monitor events from that thread with
// a blocking send: an event with no reader left (its reader closed before
// the monitor was stopped) blocks the thread, and no socket of the context
// moves a message again. Each case checks that a probe DEALER of the same
// one-I/O-thread context still reaches a ROUTER afterwards.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>

#include <zmq.hpp>

#include "security/handshake_monitor.h"
#include "security/watched_socket.h"

using namespace std::chrono_literals;
using zstore::security::HandshakeMonitor;
using zstore::security::WatchedSocket;

namespace {

// A ROUTER on 127.0.0.1 in its own context.
struct Server {
  zmq::context_t ctx;
  zmq::socket_t router{ctx, zmq::socket_type::router};
  std::string endpoint;
  Server() {
    router.set(zmq::sockopt::linger, 0);
    router.bind("tcp://127.0.0.1:0");
    endpoint = router.get(zmq::sockopt::last_endpoint);
  }
  // Whether a message with body `body` arrives within 5 s.
  bool receives(const std::string& body) {
    for (auto deadline = std::chrono::steady_clock::now() + 5s; std::chrono::steady_clock::now() < deadline;) {
      zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
      if (zmq::poll(&item, 1, 100ms) <= 0) continue;
      zmq::message_t identity, msg;
      (void)router.recv(identity);
      (void)router.recv(msg);
      if (msg.to_string() == body) return true;
    }
    return false;
  }
};

zmq::socket_t dealer(zmq::context_t& ctx) {
  zmq::socket_t s(ctx, zmq::socket_type::dealer);
  s.set(zmq::sockopt::linger, 0);
  return s;
}

// A fresh DEALER of ctx sends `body` to the server.
bool context_still_works(zmq::context_t& ctx, Server& server, const std::string& body) {
  zmq::socket_t probe = dealer(ctx);
  probe.connect(server.endpoint);
  probe.send(zmq::buffer(body), zmq::send_flags::dontwait);
  return server.receives(body);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_stopped_monitor_sends_no_event_to_its_closed_reader) {
  Server server;
  zmq::context_t ctx(1);
  zmq::socket_t watched = dealer(ctx);
  {
    HandshakeMonitor monitor(ctx, watched, false);
    monitor.stop();
  }                                  // the reader closes here; the socket lives on
  watched.connect(server.endpoint);  // CONNECTED, HANDSHAKE_SUCCEEDED: no one to read them
  BOOST_CHECK(context_still_works(ctx, server, "after-stop"));
}

BOOST_AUTO_TEST_CASE(closing_watched_sockets_mid_handshake_leaves_the_context_usable) {
  Server server;
  zmq::context_t ctx(1);
  for (int i = 0; i < 200; ++i) {
    WatchedSocket w(ctx, dealer(ctx), false);
    w.socket().connect(server.endpoint);
    w.socket().send(zmq::buffer(std::string("request")), zmq::send_flags::dontwait);
    if (i % 2 == 0) (void)w.monitor().poll();
    w.close();
  }
  BOOST_CHECK(context_still_works(ctx, server, "after-closes"));
  WatchedSocket moved(ctx, dealer(ctx), false);
  WatchedSocket target(ctx, dealer(ctx), false);
  target = std::move(moved);  // closes target's first socket in the safe order
  target.socket().connect(server.endpoint);
  target.socket().send(zmq::buffer(std::string("moved")), zmq::send_flags::dontwait);
  BOOST_CHECK(server.receives("moved"));
}
