// The shared multipart send and receive (transport/zmq_frames.h), over
// inproc sockets: whole messages, views into the parts, zero-copy
// forwarding, and would-block and unroutable peers as values.
#include "transport/zmq_frames.h"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace transport = zstore::transport;
using zstore::protocol::Frames;

namespace {

struct Pair {
  zmq::context_t ctx;
  zmq::socket_t tx{ctx, zmq::socket_type::pair};
  zmq::socket_t rx{ctx, zmq::socket_type::pair};
  Pair() {
    rx.bind("inproc://zmq-frames-test");
    tx.connect("inproc://zmq-frames-test");
  }
};

// Receives one message, polling up to a deadline (inproc delivers at once,
// but never wait forever in a test).
transport::Message receive(zmq::socket_t& socket) {
  transport::Message msg;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!transport::try_recv(socket, &msg) && std::chrono::steady_clock::now() < deadline) {
    zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(100));
  }
  return msg;
}

std::vector<std::string> strings(const transport::Message& msg) { return {msg.views.begin(), msg.views.end()}; }

}  // namespace

BOOST_AUTO_TEST_CASE(try_recv_is_false_and_leaves_the_message_empty_when_nothing_waits) {
  Pair p;
  transport::Message msg;
  msg.parts.emplace_back(std::string_view("stale"));
  msg.views.emplace_back("stale");
  BOOST_CHECK(!transport::try_recv(p.rx, &msg));
  BOOST_CHECK(msg.parts.empty());
  BOOST_CHECK(msg.views.empty());
}

BOOST_AUTO_TEST_CASE(frames_arrive_as_one_message_whose_views_point_into_its_parts) {
  Pair p;
  const Frames frames{"key", std::string("\0\1", 2), "", std::string(1000, 'v')};
  BOOST_CHECK(transport::try_send(p.tx, frames) == transport::SendOutcome::kSent);
  auto msg = receive(p.rx);
  BOOST_CHECK(strings(msg) == frames);
  BOOST_REQUIRE_EQUAL(msg.parts.size(), frames.size());
  BOOST_CHECK(msg.views[3].data() == msg.parts[3].data());
  BOOST_CHECK_EQUAL(msg.bytes(), 3u + 2u + 1000u);
}

BOOST_AUTO_TEST_CASE(try_send_parts_forwards_received_parts_without_copying_them) {
  Pair p;  // then a second hop, as the server forwards a KVSET as its KVPUB
  const Frames frames{"key", "seq", std::string(5000, 'b')};
  BOOST_REQUIRE(transport::try_send(p.tx, frames) == transport::SendOutcome::kSent);
  auto msg = receive(p.rx);
  const void* body = msg.parts[2].data();
  zmq::socket_t back_tx(p.ctx, zmq::socket_type::pair);
  zmq::socket_t back_rx(p.ctx, zmq::socket_type::pair);
  back_rx.bind("inproc://zmq-frames-test-forward");
  back_tx.connect("inproc://zmq-frames-test-forward");
  BOOST_CHECK(transport::try_send_parts(back_tx, msg.parts) == transport::SendOutcome::kSent);
  for (const auto& part : msg.parts) BOOST_CHECK_EQUAL(part.size(), 0u);  // moved from
  auto forwarded = receive(back_rx);
  BOOST_CHECK(strings(forwarded) == frames);
  BOOST_CHECK(forwarded.parts[2].data() == body);  // inproc hands over the same buffer
}

BOOST_AUTO_TEST_CASE(would_block_sends_nothing_and_leaves_the_parts_untouched) {
  zmq::context_t ctx;
  zmq::socket_t push(ctx, zmq::socket_type::push);  // never connected: every send would block
  std::vector<zmq::message_t> parts;
  parts.emplace_back(std::string_view("a"));
  parts.emplace_back(std::string_view("bb"));
  BOOST_CHECK(transport::try_send_parts(push, parts) == transport::SendOutcome::kWouldBlock);
  BOOST_CHECK_EQUAL(parts[0].to_string_view(), "a");
  BOOST_CHECK_EQUAL(parts[1].to_string_view(), "bb");
  BOOST_CHECK(transport::try_send(push, Frames{"x"}) == transport::SendOutcome::kWouldBlock);
}

BOOST_AUTO_TEST_CASE(a_router_reports_a_gone_peer_as_unroutable) {
  zmq::context_t ctx;
  zmq::socket_t router(ctx, zmq::socket_type::router);
  router.set(zmq::sockopt::router_mandatory, 1);
  router.bind("inproc://zmq-frames-test-router");
  BOOST_CHECK(transport::try_send(router, Frames{"hello"}, "nobody") == transport::SendOutcome::kUnroutable);
}
