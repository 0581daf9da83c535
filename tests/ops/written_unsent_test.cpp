// A client that sends WRITE?s and reads none of the answers fills its
// queue on the snapshot port: the answers past it are dropped and counted
// (zstore_chp_written_unsent_total), every write still applied, and a
// retry of a write whose answer was dropped learns its outcome.
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

}  // namespace

BOOST_AUTO_TEST_CASE(answers_a_client_does_not_read_are_dropped_counted_and_learned_by_a_retry) {
  zstore::testing::HttpZstored z;
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  zmq::context_t ctx;
  zmq::socket_t dealer(ctx, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::rcvhwm, 1);
  dealer.set(zmq::sockopt::rcvbuf, 4096);  // a small TCP window: the server's queue fills soon
  dealer.set(zmq::sockopt::linger, 0);
  dealer.connect(z.server.chp_endpoint());
  // Until an answer is dropped: the server's TCP send buffer (a few MiB)
  // and its 1,000-message queue fill first. Sent without blocking, as the
  // server may stop reading this connection meanwhile.
  const chp::Precondition absent{chp::Precondition::Kind::kAbsent, 0};
  constexpr int kMaxWrites = 400000;
  int sent = 0;
  auto m = z.metrics();
  const auto deadline = std::chrono::steady_clock::now() + zstore::testing::scaled(40s);
  while (sent < kMaxWrites && std::chrono::steady_clock::now() < deadline) {
    auto frames = chp::encode_write("/u/" + std::to_string(sent), uuid_of(sent), "", "v", absent);
    if (zstore::transport::try_send(dealer, frames) == zstore::transport::SendOutcome::kSent) {
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
  // The last write's answer was certainly dropped (1,000 wait before it):
  // asked again on a connection that reads, it is applied at its sequence.
  zmq::socket_t reader(ctx, zmq::socket_type::dealer);
  reader.set(zmq::sockopt::linger, 0);
  reader.connect(z.server.chp_endpoint());
  const int last = sent - 1;
  zstore::transport::send(reader, chp::encode_write("/u/" + std::to_string(last), uuid_of(last), "", "v", absent));
  zmq::pollitem_t item{reader.handle(), 0, ZMQ_POLLIN, 0};
  BOOST_REQUIRE(zmq::poll(&item, 1, zstore::testing::scaled(10s)) == 1);
  zstore::transport::Message msg;
  BOOST_REQUIRE(zstore::transport::try_recv(reader, &msg));
  auto outcome = chp::decode_written(msg.views);
  BOOST_REQUIRE(outcome.ok());
  BOOST_TEST(chp::to_string(outcome->kind) == "applied");
  BOOST_TEST(outcome->sequence > 0u);
}
