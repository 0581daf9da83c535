// A client that sends WRITE?s and reads none of the answers fills its
// queue on the snapshot port, then the answers waiting for it
// (written_outbox.h): those past that bound are dropped and counted
// (zstore_chp_written_unsent_total), every write still applied, and a
// retry of a write whose answer was dropped learns its outcome. A client
// that reads late gets every answer.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>
#include <thread>

#include <zmq.hpp>

#include "protocol/chp_writes.h"
#include "tests/ops/ops_support.h"
#include "tools/harness/harness.h"
#include "transport/zmq_frames.h"

namespace chp = zstore::protocol::chp;
using namespace std::chrono_literals;

namespace {

std::string uuid_of(int n) {
  std::string u(16, 'w');
  for (int i = 0; i < 4; ++i) u[static_cast<std::size_t>(i)] = static_cast<char>(n >> (8 * i));
  return u;
}

// WRITE? n: key prefix + n, if-absent; try_write sends it without
// blocking (false when the queue to the server is full).
zstore::protocol::Frames write_of(const std::string& prefix, int n) {
  const chp::Precondition absent{chp::Precondition::Kind::kAbsent, 0};
  return chp::encode_write(prefix + std::to_string(n), uuid_of(n), "", "v", absent);
}

bool try_write(zmq::socket_t& dealer, const std::string& prefix, int n) {
  return zstore::transport::try_send(dealer, write_of(prefix, n)) == zstore::transport::SendOutcome::kSent;
}

// A writer whose answers pile up on the server: one message and a small
// TCP window on its side, so the server's queue to it fills soon.
zmq::socket_t slow_reader(zmq::context_t& ctx, const std::string& endpoint) {
  zmq::socket_t dealer(ctx, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::rcvhwm, 1);
  dealer.set(zmq::sockopt::rcvbuf, 4096);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.connect(endpoint);
  return dealer;
}

}  // namespace

BOOST_AUTO_TEST_CASE(answers_a_client_does_not_read_are_dropped_counted_and_learned_by_a_retry) {
  zstore::testing::HttpZstored z;
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  zmq::context_t ctx;
  zmq::socket_t dealer = slow_reader(ctx, z.server.chp_endpoint());
  // Until an answer is dropped: the server's TCP send buffer (a few MiB),
  // its 1,000-message queue and 16,384 waiting answers fill first. Sent
  // without blocking, as the server may stop reading this connection
  // meanwhile.
  constexpr int kMaxWrites = 400000;
  int sent = 0;
  auto m = z.metrics();
  const auto deadline = std::chrono::steady_clock::now() + zstore::testing::scaled(40s);
  while (sent < kMaxWrites && std::chrono::steady_clock::now() < deadline) {
    if (try_write(dealer, "/u/", sent)) {
      ++sent;
    } else {
      std::this_thread::sleep_for(1ms);
    }
    if (sent % 10000 == 0 && zstore::testing::metric(m = z.metrics(), "zstore_chp_written_unsent_total") > 0) break;
  }
  BOOST_REQUIRE_MESSAGE(zstore::testing::wait_until([&] {
                          m = z.metrics();
                          return zstore::testing::metric(m, "zstore_chp_writes_confirmed_total") >= sent;
                        }),
                        z.server.log());
  BOOST_TEST_MESSAGE("sent " << sent);
  BOOST_TEST(zstore::testing::metric(m, "zstore_chp_written_unsent_total") > 0);
  // The last write's answer was certainly dropped (16,384 wait before it):
  // asked again on a connection that reads, it is applied at its sequence.
  zmq::socket_t reader(ctx, zmq::socket_type::dealer);
  reader.set(zmq::sockopt::linger, 0);
  reader.connect(z.server.chp_endpoint());
  const int last = sent - 1;
  zstore::transport::send(reader, write_of("/u/", last));
  zmq::pollitem_t item{reader.handle(), 0, ZMQ_POLLIN, 0};
  BOOST_REQUIRE(zmq::poll(&item, 1, zstore::testing::scaled(10s)) == 1);
  zstore::transport::Message msg;
  BOOST_REQUIRE(zstore::transport::try_recv(reader, &msg));
  auto outcome = chp::decode_written(msg.views);
  BOOST_REQUIRE(outcome.ok());
  BOOST_TEST(chp::to_string(outcome->kind) == "applied");
  BOOST_TEST(outcome->sequence > 0u);
}

BOOST_AUTO_TEST_CASE(a_client_that_reads_its_answers_late_gets_every_one) {
  zstore::testing::HttpZstored z;
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  zmq::context_t ctx;
  zmq::socket_t dealer = slow_reader(ctx, z.server.chp_endpoint());
  // Until answers wait on the server (its pipe to us is full), and 2,000
  // more behind them; paced so that the server has taken all but the last
  // thousand sent (TCP buffers could hold tens of thousands on the way).
  constexpr int kMaxWrites = 400000;
  constexpr int kStep = 1000;
  int sent = 0;
  int full_at = -1;
  auto m = z.metrics();
  const auto deadline = std::chrono::steady_clock::now() + zstore::testing::scaled(60s);
  while (sent < kMaxWrites && std::chrono::steady_clock::now() < deadline && (full_at < 0 || sent < full_at + 2000)) {
    if (!try_write(dealer, "/late/", sent)) {
      std::this_thread::sleep_for(1ms);
      continue;
    }
    if (++sent % kStep != 0) continue;
    BOOST_REQUIRE(zstore::testing::wait_until([&] {
      m = z.metrics();
      return zstore::testing::metric(m, "zstore_chp_writes_confirmed_total") >= sent - kStep;
    }));
    if (full_at < 0 && zstore::testing::metric(m, "zstore_chp_written_waiting") > 0) full_at = sent;
  }
  BOOST_REQUIRE_MESSAGE(full_at >= 0, "the server's queue to the client never filled; sent " << sent);
  int answered = 0;
  zstore::transport::Message msg;
  zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
  while (answered < sent && zmq::poll(&item, 1, zstore::testing::scaled(10s)) == 1) {
    while (zstore::transport::try_recv(dealer, &msg)) {
      auto outcome = chp::decode_written(msg.views);
      BOOST_REQUIRE(outcome.ok());
      ++answered;
    }
  }
  m = z.metrics();
  BOOST_TEST(answered == sent);
  BOOST_TEST(zstore::testing::metric(m, "zstore_chp_written_unsent_total") == 0.0);
  BOOST_TEST(zstore::testing::metric(m, "zstore_chp_written_waiting") == 0.0);
}
