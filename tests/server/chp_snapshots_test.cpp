// SnapshotPump over an inproc ROUTER: the reactor may poll without waiting
// exactly while some session can send (ready()), a session paused on a
// full pipe resumes once the client reads, and one paused for the stall
// time is dropped with its cursor.
#include "server/chp_snapshots.h"

#include <boost/test/unit_test.hpp>
#include <memory>
#include <string>

#include <zmq.hpp>

#include "protocol/chp_codec.h"

using zstore::server::SnapshotPump;

namespace {

// A cursor over keys k0 .. k(n-1) with 100-byte values.
class FakeCursor final : public zstore::storage::ChpSnapshotCursor {
 public:
  explicit FakeCursor(std::size_t n, bool* destroyed = nullptr) : n_(n), destroyed_(destroyed) {}
  ~FakeCursor() override {
    if (destroyed_) *destroyed_ = true;
  }
  std::uint64_t sequence() const override { return 42; }
  bool next(zstore::storage::ChpRecord* out) override {
    if (i_ == n_) return false;
    out->key = "k" + std::to_string(i_);
    out->entry = {i_ + 1, 0, "", "", std::string(100, 'v')};
    ++i_;
    return true;
  }
  zstore::storage::Status status() const override { return zstore::storage::Status::Ok(); }

 private:
  std::size_t n_;
  std::size_t i_ = 0;
  bool* destroyed_;
};

struct Sockets {
  zmq::context_t ctx;
  zmq::socket_t router{ctx, zmq::socket_type::router};
  zmq::socket_t client{ctx, zmq::socket_type::dealer};
  Sockets() {
    router.set(zmq::sockopt::router_mandatory, 1);
    router.set(zmq::sockopt::sndhwm, 100);
    router.bind("inproc://snapshots-test");
    client.set(zmq::sockopt::routing_id, "client");
    client.set(zmq::sockopt::rcvhwm, 100);
    client.connect("inproc://snapshots-test");
    client.send(zmq::str_buffer("hello"), zmq::send_flags::none);  // the router learns the identity
    zmq::message_t m;
    (void)router.recv(m);  // identity
    (void)router.recv(m);  // body
  }
  // Reads every message waiting at the client; returns how many were KVSYNCs
  // and sets *done on KTHXBAI.
  std::size_t drain(bool* done) {
    std::size_t keys = 0;
    while (true) {
      std::vector<zmq::message_t> parts;
      zmq::message_t part;
      if (!client.recv(part, zmq::recv_flags::dontwait)) return keys;
      parts.push_back(std::move(part));
      while (parts.back().more()) {
        (void)client.recv(part);
        parts.push_back(std::move(part));
      }
      BOOST_REQUIRE_EQUAL(parts.size(), zstore::protocol::chp::kKvFrames);
      if (parts[0].to_string_view() == zstore::protocol::chp::kKthxbai) {
        *done = true;
      } else {
        ++keys;
      }
    }
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(a_new_session_is_ready_and_an_empty_pump_is_not) {
  Sockets s;
  SnapshotPump pump;
  BOOST_CHECK(!pump.ready());
  BOOST_REQUIRE(pump.start("client", "", std::make_unique<FakeCursor>(10)));
  BOOST_CHECK(pump.ready());
}

BOOST_AUTO_TEST_CASE(a_session_paused_on_a_full_pipe_is_not_ready_until_the_client_reads) {
  Sockets s;
  SnapshotPump pump;
  constexpr std::size_t kKeys = 5000;  // far beyond both high-water marks
  BOOST_REQUIRE(pump.start("client", "", std::make_unique<FakeCursor>(kKeys)));
  auto r = pump.pump(s.router, kKeys, 0);
  BOOST_CHECK(r.blocked);
  BOOST_CHECK_LT(r.keys_sent, kKeys);
  BOOST_CHECK(pump.active());
  BOOST_CHECK(!pump.ready());  // the reactor may wait before retrying

  std::size_t received = 0;
  bool done = false;
  for (int turn = 0; turn < 10000 && !done; ++turn) {
    received += s.drain(&done);
    (void)s.router.get(zmq::sockopt::events);  // as the reactor's poll: the router learns its pipe drained
    if (pump.active()) pump.pump(s.router, 64, 0);
  }
  received += s.drain(&done);
  BOOST_CHECK(done);
  BOOST_CHECK_EQUAL(received, kKeys);
  BOOST_CHECK(!pump.active());
  BOOST_CHECK(!pump.ready());
}

BOOST_AUTO_TEST_CASE(a_session_paused_longer_than_the_stall_time_is_dropped_and_its_cursor_released) {
  Sockets s;
  SnapshotPump pump(256, std::chrono::milliseconds(500));
  bool destroyed = false;
  BOOST_REQUIRE(pump.start("client", "", std::make_unique<FakeCursor>(5000, &destroyed)));
  auto t0 = SnapshotPump::Clock::now();
  auto r = pump.pump(s.router, 5000, 0, t0);
  BOOST_REQUIRE(r.blocked);
  r = pump.pump(s.router, 5000, 0, t0 + std::chrono::milliseconds(400));  // still within the stall time
  BOOST_CHECK_EQUAL(r.stalled, 0u);
  BOOST_CHECK(pump.active());
  BOOST_CHECK(!destroyed);
  r = pump.pump(s.router, 5000, 0, t0 + std::chrono::seconds(2));
  BOOST_CHECK_EQUAL(r.stalled, 1u);
  BOOST_CHECK(!pump.active());
  BOOST_CHECK(destroyed);
}

BOOST_AUTO_TEST_CASE(a_slow_reader_that_keeps_reading_is_not_dropped) {
  Sockets s;
  SnapshotPump pump(256, std::chrono::milliseconds(500));
  BOOST_REQUIRE(pump.start("client", "", std::make_unique<FakeCursor>(5000)));
  auto t = SnapshotPump::Clock::now();
  bool done = false;
  std::size_t stalled = 0;
  for (int turn = 0; turn < 10000 && pump.active(); ++turn) {
    t += std::chrono::milliseconds(100);  // 100 ms per turn: far slower than the pipe, never stalled 500 ms
    s.drain(&done);
    (void)s.router.get(zmq::sockopt::events);
    stalled += pump.pump(s.router, 64, 0, t).stalled;
  }
  s.drain(&done);
  BOOST_CHECK_EQUAL(stalled, 0u);
  BOOST_CHECK(done);
}

// The HA peer's requests: accepted past max_sessions, served first with the
// whole budget (a passive's resync must not wait behind every client).
BOOST_AUTO_TEST_CASE(a_priority_session_is_never_refused_and_gets_the_whole_budget) {
  Sockets s;
  SnapshotPump pump(1);
  BOOST_REQUIRE(pump.start("elsewhere", "", std::make_unique<FakeCursor>(1000)));
  BOOST_CHECK(!pump.start("another", "", std::make_unique<FakeCursor>(1000)));  // past max_sessions
  BOOST_REQUIRE(pump.start("client", "", std::make_unique<FakeCursor>(1000), {}, true, {}, true));
  auto r = pump.pump(s.router, 10, 0);
  bool done = false;
  BOOST_CHECK_EQUAL(s.drain(&done), 10u);  // an ordinary session's share would be 5
  BOOST_CHECK_EQUAL(r.aborted, 1u);        // "elsewhere" has no connection
  BOOST_CHECK(!done);
}
