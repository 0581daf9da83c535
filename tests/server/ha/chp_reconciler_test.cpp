// ChpReconciler against a scripted peer (a ROUTER on loopback answering
// RECONCILE?): the active's side of a hand-over is worked out a bounded
// part at a time, and what clients write meanwhile is not overwritten.
#include "server/ha/chp_reconciler.h"

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "protocol/chp_codec.h"
#include "server/reactor/zmq_frames.h"
#include "storage/chp/chp_store.h"
#include "storage/db/database.h"
#include "tests/support/test_support.h"

namespace chp = zstore::protocol::chp;
using namespace std::chrono_literals;
using zstore::server::ChpReconciler;
using zstore::storage::ChpWrite;

namespace {

std::string uuid_of(int n) {
  std::string u(16, '\0');
  std::snprintf(u.data(), u.size(), "u%014d", n);
  return u;
}

std::string key_of(int n) {
  char k[16];
  std::snprintf(k, sizeof k, "k%04d", n);
  return k;
}

ChpWrite write(std::string key, std::string uuid, std::string value) {
  ChpWrite w;
  w.key = std::move(key);
  w.uuid = std::move(uuid);
  w.value = std::move(value);
  return w;
}

struct Fixture {
  zstore::testing::TempDir dir;
  std::unique_ptr<zstore::storage::Database> db;
  std::unique_ptr<zstore::storage::ChpStore> store;
  zmq::context_t ctx;
  zmq::socket_t peer{ctx, zmq::socket_type::router};
  std::string endpoint;

  Fixture() {
    BOOST_REQUIRE(zstore::storage::Database::Open(dir.str(), {}, &db).ok());
    BOOST_REQUIRE(zstore::storage::ChpStore::Open(db.get(), &store).ok());
    peer.set(zmq::sockopt::sndhwm, 0);  // the whole answer queues at once
    endpoint = "tcp://127.0.0.1:" + std::to_string(zstore::testing::free_port_range(1));
    peer.bind(endpoint);
  }

  void apply(std::vector<ChpWrite> writes) { BOOST_REQUIRE(store->apply(writes).ok()); }

  // The peer answers the reconciler's request with updates and its KTHXBAI.
  void answer(ChpReconciler& r, const std::vector<chp::KvMsg>& updates, std::uint64_t last) {
    BOOST_REQUIRE(send_answer(r, updates, last) == ChpReconciler::Progress::kDone);
    BOOST_REQUIRE(r.received());
  }

  // Sends the answer; returns what on_socket() gave once it stopped running.
  ChpReconciler::Progress send_answer(ChpReconciler& r, const std::vector<chp::KvMsg>& updates, std::uint64_t last) {
    zstore::server::ReceivedMessage request;
    BOOST_REQUIRE(zstore::testing::wait_until([&] { return zstore::server::try_recv(peer, &request); }, 10s));
    auto deadline = std::chrono::steady_clock::now() + zstore::testing::scaled(10s);
    std::string identity(request.views[0]);
    BOOST_REQUIRE_EQUAL(std::string(request.views[1]), std::string(zstore::server::kReconcileCommand));
    for (const auto& kv : updates) (void)zstore::server::try_send(peer, chp::encode_kvmsg(kv), identity);
    (void)zstore::server::try_send(peer, chp::encode_kthxbai({last, "", "complete=1\n"}), identity);
    for (;;) {
      auto progress = r.on_socket();
      if (progress != ChpReconciler::Progress::kRunning) return progress;
      BOOST_REQUIRE_MESSAGE(std::chrono::steady_clock::now() < deadline, "the answer did not arrive");
      zmq::pollitem_t item{r.socket().handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(50));
    }
  }
};

}  // namespace

// The peer holds 3000 keys we lack and a few we hold too. Each step reads a
// bounded part; between steps our clients write, and their writes stand:
// a set and a delete of keys the peer's side also updated.
BOOST_FIXTURE_TEST_CASE(a_hand_over_is_given_in_bounded_steps_and_client_writes_meanwhile_stand, Fixture) {
  apply({write("k2998", uuid_of(9001), "old")});   // seq 1, the common point
  apply({write("s", uuid_of(9002), "same")});      // seq 2: the peer applied it later (10)
  apply({write("t", uuid_of(9003), "same")});      // seq 3: the peer applied it earlier (2)
  BOOST_REQUIRE(store->history_updates_after(1));  // our history reaches back: last writer wins

  std::vector<chp::KvMsg> updates;
  updates.push_back({"t", 2, uuid_of(9003), "", "same"});
  updates.push_back({"s", 10, uuid_of(9002), "", "same"});
  updates.push_back({"k2998", 11, uuid_of(8998), "", "peer"});
  updates.push_back({"k2999", 12, uuid_of(8999), "", "peer"});
  for (int i = 0; i < 2998; ++i) updates.push_back({key_of(i), 100u + i, uuid_of(i), "", "peer"});

  ChpReconciler r(ctx, endpoint, 1, {}, [] { return 0; });
  r.start();
  answer(r, updates, 3097);

  std::map<std::string, ChpWrite> given;
  int steps = 0;
  for (auto progress = ChpReconciler::Progress::kRunning; progress == ChpReconciler::Progress::kRunning;) {
    BOOST_REQUIRE_LT(++steps, 100);
    std::vector<ChpWrite> out;
    progress = r.step(*store, &out);
    BOOST_REQUIRE_MESSAGE(progress != ChpReconciler::Progress::kFailed, r.why());
    BOOST_CHECK_LE(out.size(), ChpReconciler::kStepKeys);
    for (const auto& w : out) BOOST_CHECK_MESSAGE(given.emplace(w.key, w).second, w.key + " given twice");
    apply(std::move(out));
    if (steps == 2) {  // our history is read; the peer's keys are being weighed
      apply({write("k2999", uuid_of(9004), "mine")});
      r.note_client_write("k2999");
      apply({write("k2998", uuid_of(9005), "")});  // a client's delete
      r.note_client_write("k2998");
    }
  }
  BOOST_CHECK_GE(steps, 4);  // our history, then 3001 keys 1024 at a time
  BOOST_CHECK_EQUAL(r.given(), given.size());
  BOOST_CHECK_EQUAL(given.size(), 2999u);  // k0000-k2997 and s
  BOOST_CHECK(given.contains("k0000") && given.contains("k2997"));
  BOOST_CHECK_MESSAGE(given.contains("s"), "the peer's later copy of the same update is published again");
  BOOST_CHECK_MESSAGE(!given.contains("t"), "our later copy of the same update stays");
  BOOST_CHECK_MESSAGE(!given.contains("k2999"), "a client's set during the hand-over was overwritten");
  BOOST_CHECK_MESSAGE(!given.contains("k2998"), "a client's delete during the hand-over was undone");
}

// The peer's deletes without UUID: an expiry is not taken (we expire what
// we hold ourselves, at its own time), a superseded set (a client's set of
// the peer whose key was deleted or expired since) is a client's update,
// taken as a plain delete.
BOOST_FIXTURE_TEST_CASE(a_superseded_set_is_taken_as_a_delete_and_an_expiry_is_not, Fixture) {
  apply({write("x", uuid_of(1), "ours"), write("y", uuid_of(2), "ours")});  // seq 1, 2: the common point
  std::vector<chp::KvMsg> updates;
  updates.push_back({"x", 5, "", std::string(chp::kSupersededProperty) + "=1\n", ""});
  updates.push_back({"y", 6, "", "", ""});
  ChpReconciler r(ctx, endpoint, 2, {}, [] { return 0; });
  r.start();
  answer(r, updates, 6);

  std::vector<ChpWrite> given;
  for (int steps = 0;; ++steps) {
    BOOST_REQUIRE_LT(steps, 10);
    auto progress = r.step(*store, &given);
    BOOST_REQUIRE_MESSAGE(progress != ChpReconciler::Progress::kFailed, r.why());
    if (progress == ChpReconciler::Progress::kDone) break;
  }
  BOOST_REQUIRE_EQUAL(given.size(), 1u);
  BOOST_CHECK_EQUAL(given[0].key, "x");
  BOOST_CHECK(given[0].value.empty());
  BOOST_CHECK(given[0].uuid.empty());
  BOOST_CHECK_MESSAGE(given[0].properties.empty(), "the marker is not applied: " + given[0].properties);
}

// What clients write during a hand-over is remembered by key, within a
// memory budget: past it the hand-over fails (and is retried from the top),
// whatever the number of keys.
BOOST_FIXTURE_TEST_CASE(the_keys_noted_during_a_hand_over_are_bounded_in_bytes, Fixture) {
  ChpReconciler r(ctx, endpoint, 0, {}, [] { return 0; });
  r.start();
  answer(r, {{"a", 1, uuid_of(1), "", "peer"}}, 1);
  const std::size_t key_bytes = 64 << 10;
  const std::size_t fit = ChpReconciler::kMaxNotedBytes / (key_bytes + ChpReconciler::kNotedKeyOverhead);
  std::string key(key_bytes, 'k');
  for (std::size_t i = 0; i < fit; ++i) {
    std::memcpy(key.data(), &i, sizeof i);
    r.note_client_write(key);
  }
  std::vector<ChpWrite> out;
  r.note_client_write(key);  // the same key again: no more memory
  BOOST_CHECK(r.step(*store, &out) != ChpReconciler::Progress::kFailed);
  std::size_t i = fit;
  std::memcpy(key.data(), &i, sizeof i);
  r.note_client_write(key);  // one more
  BOOST_CHECK(r.step(*store, &out) == ChpReconciler::Progress::kFailed);
  BOOST_CHECK_NE(r.why().find("256 MiB"), std::string::npos);
}

// The peer's side is held until step() has given it: within the receive
// budget in bytes (values included), else the hand-over fails (and is
// retried, the peer keeping its map) instead of growing without bound.
BOOST_FIXTURE_TEST_CASE(the_peers_side_of_a_hand_over_is_bounded_in_bytes, Fixture) {
  std::vector<chp::KvMsg> updates;
  for (int i = 0; i < 1000; ++i) updates.push_back({key_of(i), 10u + i, uuid_of(i), "", std::string(1024, 'v')});
  {
    // About 1.2 MiB held.
    ChpReconciler fits(
        ctx, endpoint, 0, {}, [] { return 0; }, {}, 4u << 20);
    fits.start();
    BOOST_CHECK(send_answer(fits, updates, 1009) == ChpReconciler::Progress::kDone);
  }
  ChpReconciler r(
      ctx, endpoint, 0, {}, [] { return 0; }, {}, 512u << 10);
  r.start();
  BOOST_REQUIRE(send_answer(r, updates, 1009) == ChpReconciler::Progress::kFailed);
  BOOST_CHECK_NE(r.why().find("--receive-buffer-bytes (524288 bytes)"), std::string::npos);
  BOOST_CHECK(!r.received());
}
