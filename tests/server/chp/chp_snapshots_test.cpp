// SnapshotPump over an inproc ROUTER: the reactor may poll without waiting
// exactly while some session can send (ready()), a session paused on a
// full pipe resumes once the client reads, and one paused for the stall
// time is dropped with its cursor; a client's snapshot leaves out keys
// whose expiry has passed, a resume gives them as deletes; a refused
// request opens no cursor.
#include "server/chp/chp_snapshots.h"

#include <boost/test/unit_test.hpp>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <zmq.hpp>
#include <zmq_addon.hpp>

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

// A cursor over given (key, expires_at_ms) sets, sequences 1, 2, ...,
// uuid "u<key>", properties "ttl=5\n", value "v<key>"; updates() as told
// (a history cursor's records, or the map's keys).
class ExpiringCursor final : public zstore::storage::ChpSnapshotCursor {
 public:
  ExpiringCursor(std::vector<std::pair<std::string, std::uint64_t>> sets, bool updates)
      : sets_(std::move(sets)), updates_(updates) {}
  std::uint64_t sequence() const override { return sets_.size(); }
  bool next(zstore::storage::ChpRecord* out) override {
    if (i_ == sets_.size()) return false;
    const auto& [key, expires_at] = sets_[i_];
    out->key = key;
    out->entry = {i_ + 1, expires_at, "u" + key, "ttl=5\n", "v" + key};
    ++i_;
    return true;
  }
  zstore::storage::Status status() const override { return zstore::storage::Status::Ok(); }
  bool updates() const override { return updates_; }

 private:
  std::vector<std::pair<std::string, std::uint64_t>> sets_;
  bool updates_;
  std::size_t i_ = 0;
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
  // Reads the KVSYNCs waiting at the client up to KTHXBAI, by key: its
  // sequence, uuid, properties and value.
  std::map<std::string, std::vector<std::string>> kvsyncs() {
    std::map<std::string, std::vector<std::string>> out;
    while (true) {
      std::vector<zmq::message_t> parts;
      BOOST_REQUIRE(zmq::recv_multipart(client, std::back_inserter(parts), zmq::recv_flags::dontwait));
      BOOST_REQUIRE_EQUAL(parts.size(), zstore::protocol::chp::kKvFrames);
      if (parts[0].to_string_view() == zstore::protocol::chp::kKthxbai) return out;
      std::uint64_t sequence = 0;
      for (char c : parts[1].to_string_view()) sequence = sequence << 8 | static_cast<unsigned char>(c);
      out[parts[0].to_string()] = {std::to_string(sequence), parts[2].to_string(), parts[3].to_string(),
                                   parts[4].to_string()};
    }
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

// Keys whose expiry has passed but that the sweep has not deleted yet
// (after a restart or a takeover it deletes a bounded batch a turn).
BOOST_AUTO_TEST_CASE(a_client_snapshot_leaves_out_expired_keys_and_a_resume_gives_them_as_deletes) {
  constexpr std::uint64_t kNow = 100000;
  const std::vector<std::pair<std::string, std::uint64_t>> sets = {
      {"forever", 0}, {"later", kNow + 10000}, {"due", kNow}, {"past", kNow - 5000}};
  using Seen = std::map<std::string, std::vector<std::string>>;

  Sockets s;
  SnapshotPump pump;
  BOOST_REQUIRE(pump.start("client", "", std::make_unique<ExpiringCursor>(sets, false)));
  auto r = pump.pump(s.router, 100, kNow);
  BOOST_CHECK_EQUAL(r.completed, 1u);
  BOOST_CHECK_EQUAL(r.expired, 2u);
  BOOST_CHECK_EQUAL(r.keys_sent, 2u);
  BOOST_CHECK((s.kvsyncs() == Seen{{"forever", {"1", "uforever", "ttl=5\n", "vforever"}},
                                   {"later", {"2", "ulater", "ttl=10\n", "vlater"}}}));

  // A resume: the updates after a sequence; an expired one comes as a
  // delete without UUID at its sequence.
  BOOST_REQUIRE(pump.start("client", "", std::make_unique<ExpiringCursor>(sets, true)));
  r = pump.pump(s.router, 100, kNow);
  BOOST_CHECK_EQUAL(r.expired, 0u);
  BOOST_CHECK_EQUAL(r.keys_sent, 4u);
  BOOST_CHECK((s.kvsyncs() == Seen{{"forever", {"1", "uforever", "ttl=5\n", "vforever"}},
                                   {"later", {"2", "ulater", "ttl=10\n", "vlater"}},
                                   {"due", {"3", "", "", ""}},
                                   {"past", {"4", "", "", ""}}}));

  // An HA peer (exact expiry) gets every key with its expiry, expired or not.
  BOOST_REQUIRE(pump.start("client", "", std::make_unique<ExpiringCursor>(sets, false), "", true));
  r = pump.pump(s.router, 100, kNow);
  BOOST_CHECK_EQUAL(r.expired, 0u);
  auto seen = s.kvsyncs();
  BOOST_CHECK_EQUAL(seen.size(), 4u);
  BOOST_CHECK_EQUAL(seen["past"][3], "vpast");
  BOOST_CHECK_NE(seen["past"][2].find("ttl=1\n"), std::string::npos);
}

// A refused request makes no cursor (no RocksDB snapshot and iterator):
// a flood of requests past the slots costs only the admission check.
BOOST_AUTO_TEST_CASE(a_refused_request_opens_no_cursor_and_an_admitted_one_opens_one) {
  SnapshotPump pump(1);
  int opened = 0;
  auto open = [&] {
    ++opened;
    return SnapshotPump::Opened{std::make_unique<FakeCursor>(10), "props"};
  };
  BOOST_REQUIRE(pump.start("first", "", open));
  BOOST_CHECK_EQUAL(opened, 1);
  BOOST_CHECK(!pump.start("second", "", open));  // past max_sessions, nobody paused to evict
  BOOST_CHECK_EQUAL(opened, 1);
  BOOST_CHECK_EQUAL(pump.size(), 1u);
}

// Every slot taken (a flood of whole-map requests from the good client's
// own address): a request whose answer is small is served anyway, ahead of
// the others; one whose answer is not, or past kMaxSmallSessions, is
// refused and opens no cursor. Only a refused request is estimated.
BOOST_AUTO_TEST_CASE(a_request_refused_a_slot_is_served_when_its_answer_is_small) {
  Sockets s;
  SnapshotPump pump(1);
  int estimated = 0, opened = 0;
  auto small = [&] { return ++estimated, true; };
  auto large = [&] { return ++estimated, false; };
  auto open = [&](std::size_t keys) {
    return [&opened, keys] {
      ++opened;
      return SnapshotPump::Opened{std::make_unique<FakeCursor>(keys), ""};
    };
  };
  BOOST_REQUIRE(pump.start("elsewhere", "", open(100000), false, {}, false, {}, small));
  BOOST_CHECK_EQUAL(estimated, 0);  // admitted: not estimated
  BOOST_CHECK(!pump.start("other", "", open(100000), false, {}, false, {}, large));
  BOOST_CHECK_EQUAL(estimated, 1);
  BOOST_CHECK_EQUAL(opened, 1);  // refused before a cursor
  BOOST_REQUIRE(pump.start("client", "good/", open(3), false, {}, false, {}, small));
  for (std::size_t i = 1; i < SnapshotPump::kMaxSmallSessions; ++i) {
    BOOST_REQUIRE(pump.start("small" + std::to_string(i), "", open(1), false, {}, false, {}, small));
  }
  BOOST_CHECK(!pump.start("one-more", "", open(1), false, {}, false, {}, small));
  BOOST_CHECK_EQUAL(pump.size(), 1 + SnapshotPump::kMaxSmallSessions);
  auto r = pump.pump(s.router, 2, 0);  // a small answer gets the whole budget, not a share
  BOOST_CHECK_EQUAL(r.keys_sent, 2u);
  r = pump.pump(s.router, 2, 0);
  BOOST_CHECK_EQUAL(r.completed, 1u);
  auto seen = s.kvsyncs();
  BOOST_CHECK_EQUAL(seen.size(), 3u);
  BOOST_CHECK_EQUAL(seen["k2"][0], "3");
}

// A small answer holds no slot: a request that needs one evicts a paused
// session that holds a slot, never a small answer (one estimated small but
// larger, paused on its client's full pipe), which would free none.
BOOST_AUTO_TEST_CASE(a_paused_small_answer_is_never_evicted_for_a_slot) {
  Sockets s;
  zmq::socket_t second(s.ctx, zmq::socket_type::dealer);
  second.set(zmq::sockopt::routing_id, "second");
  second.set(zmq::sockopt::rcvhwm, 100);
  second.connect("inproc://snapshots-test");
  second.send(zmq::str_buffer("hello"), zmq::send_flags::none);
  zmq::message_t m;
  (void)s.router.recv(m);
  (void)s.router.recv(m);
  SnapshotPump pump(1);
  auto open = [](std::size_t keys) {
    return [keys] { return SnapshotPump::Opened{std::make_unique<FakeCursor>(keys), ""}; };
  };
  BOOST_REQUIRE(pump.start("client", "", open(5000)));
  BOOST_REQUIRE(pump.start("second", "", open(5000), false, {}, false, {}, [] { return true; }));  // a wrong estimate
  auto t0 = SnapshotPump::Clock::now();
  BOOST_REQUIRE(pump.pump(s.router, 5000, 0, t0).blocked);     // both pipes full
  pump.pump(s.router, 5000, 0, t0 + std::chrono::seconds(2));  // both paused past the 500 ms
  BOOST_REQUIRE(pump.start("third", "", open(10)));
  // "second" still streams once its client reads; "client" was evicted.
  auto drained = [](zmq::socket_t& d) {
    std::size_t n = 0;
    for (zmq::message_t part; d.recv(part, zmq::recv_flags::dontwait);) n += part.more() ? 0 : 1;
    return n;
  };
  drained(second);
  drained(s.client);
  (void)s.router.get(zmq::sockopt::events);
  pump.pump(s.router, 5000, 0, t0 + std::chrono::seconds(3));
  BOOST_CHECK_GT(drained(second), 0u);
  BOOST_CHECK_EQUAL(drained(s.client), 0u);
}
