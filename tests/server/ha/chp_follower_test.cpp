// ChpFollower against a scripted leader (ROUTER + PUB on loopback): what
// the passive still holds as pending once its snapshot is loaded.
#include "server/ha/chp_follower.h"

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "protocol/byte_order.h"
#include "protocol/chp_codec.h"
#include "server/reactor/receive_budget.h"
#include "server/reactor/zmq_frames.h"
#include "storage/chp/chp_store.h"
#include "tests/support/test_support.h"

namespace chp = zstore::protocol::chp;
using namespace std::chrono_literals;
using zstore::server::ChpFollower;
using zstore::server::PendingList;
using zstore::server::ReceivedMessage;

namespace {

zstore::storage::ChpWrite kvset(const std::string& key, const std::string& uuid, const std::string& value) {
  zstore::storage::ChpWrite w;
  w.key = key;
  w.uuid = uuid;
  w.value = value;
  return w;
}

}  // namespace

// The active applied and published a delete of "k" before it served our
// snapshot, but its KVPUB went out before our subscription was in place:
// the delete, received on our collector after we asked for the snapshot,
// matches nothing in it. Kept as pending, it would delete "k" again at
// takeover, after any newer value. Once the snapshot is loaded nothing
// received before is pending.
BOOST_AUTO_TEST_CASE(nothing_received_before_the_snapshot_completed_stays_pending) {
  zstore::testing::TempDir dir;
  std::unique_ptr<zstore::storage::Database> db;
  BOOST_REQUIRE(zstore::storage::Database::Open(dir.str(), {}, &db).ok());
  std::unique_ptr<zstore::storage::ChpStore> store;
  BOOST_REQUIRE(zstore::storage::ChpStore::Open(db.get(), &store).ok());

  zmq::context_t ctx;
  std::uint16_t port = zstore::testing::free_port_range(2);
  zmq::socket_t router(ctx, zmq::socket_type::router);
  router.bind("tcp://127.0.0.1:" + std::to_string(port));
  zmq::socket_t pub(ctx, zmq::socket_type::pub);
  pub.bind("tcp://127.0.0.1:" + std::to_string(port + 1));

  PendingList pending;
  ChpFollower follower(ctx, *store, pending, "tcp://127.0.0.1:" + std::to_string(port), {}, [] { return 0; });
  follower.start();
  pending.add(kvset("k", std::string(16, '\x01'), ""));     // the delete, after our request
  pending.add(kvset("j", std::string(16, '\x02'), "old"));  // overwritten in the leader since

  ReceivedMessage request;
  BOOST_REQUIRE(zstore::testing::wait_until([&] { return zstore::server::try_recv(router, &request); }, 10s));
  auto deadline = std::chrono::steady_clock::now() + zstore::testing::scaled(10s);
  std::string identity(request.views[0]);
  (void)zstore::server::try_send(router, chp::encode_kvmsg({"j", 7, std::string(16, '\x03'), "", "new"}), identity);
  (void)zstore::server::try_send(router, chp::encode_kthxbai({9, "", {}}), identity);

  while (!follower.following()) {
    BOOST_REQUIRE(std::chrono::steady_clock::now() < deadline);
    zmq::pollitem_t item{follower.snapshot_socket().handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(50));
    follower.on_snapshot_socket();
  }
  BOOST_CHECK_EQUAL(store->last_sequence(), 9u);
  BOOST_CHECK_EQUAL(pending.size(), 0u);

  // Updates received from here on are kept until the active republishes them.
  pending.add(kvset("m", std::string(16, '\x04'), "later"));
  BOOST_CHECK_EQUAL(pending.size(), 1u);
}

// ---- bounded receive queues --------------------------------------------------

namespace {

// A scripted leader (ROUTER at P, PUB at P+1) and a follower of it with a
// receive budget of `budget` bytes.
struct Bounded {
  zstore::testing::TempDir dir;
  std::unique_ptr<zstore::storage::Database> db;
  std::unique_ptr<zstore::storage::ChpStore> store;
  zmq::context_t ctx;
  std::uint16_t port = zstore::testing::free_port_range(2);
  zmq::socket_t router{ctx, zmq::socket_type::router};
  zmq::socket_t pub{ctx, zmq::socket_type::pub};
  PendingList pending;
  std::unique_ptr<ChpFollower> follower;
  std::string identity;
  std::string command, argument;  // of the latest request

  explicit Bounded(std::uint64_t budget) {
    BOOST_REQUIRE(zstore::storage::Database::Open(dir.str(), {}, &db).ok());
    BOOST_REQUIRE(zstore::storage::ChpStore::Open(db.get(), &store).ok());
    router.bind("tcp://127.0.0.1:" + std::to_string(port));
    pub.set(zmq::sockopt::sndhwm, 1);
    pub.bind("tcp://127.0.0.1:" + std::to_string(port + 1));
    follower = std::make_unique<ChpFollower>(
        ctx, *store, pending, "tcp://127.0.0.1:" + std::to_string(port), chp::Limits{}, [] { return 0; },
        zstore::security::SocketSecurity{}, budget);
    follower->start();
  }

  // Drains the follower's sockets (and calls each() every time) until a
  // snapshot request reaches the leader; false after 10 s.
  bool next_request(const std::function<void()>& each = {}) {
    auto deadline = std::chrono::steady_clock::now() + 10s;
    ReceivedMessage request;
    while (std::chrono::steady_clock::now() < deadline) {
      if (zstore::server::try_recv(router, &request)) {
        identity = std::string(request.views[0]);
        command = request.views.size() > 1 ? std::string(request.views[1]) : "";
        argument = request.views.size() > 2 ? std::string(request.views[2]) : "";
        return true;
      }
      if (each) each();
      follower->on_update_socket();
      follower->on_snapshot_socket();
      std::this_thread::sleep_for(1ms);  // a turn of a wait with a deadline; each() may pace a flood by it
    }
    return false;
  }

  void publish(std::uint64_t sequence, std::size_t value_bytes) {
    (void)zstore::server::try_send(
        pub, chp::encode_kvmsg({"k", sequence, std::string(16, '\x05'), "", std::string(value_bytes, 'v')}));
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(receive_queues_get_the_high_water_mark_of_the_budget) {
  Bounded b(64ull << 20);
  int expected = zstore::server::receive_hwm(64ull << 20, chp::Limits{});
  BOOST_CHECK_EQUAL(expected, 3);  // 64 MiB of the largest messages (16 MiB value, 64 KiB key and properties)
  BOOST_CHECK_EQUAL(b.follower->update_socket().get(zmq::sockopt::rcvhwm), expected);
  BOOST_CHECK_EQUAL(b.follower->snapshot_socket().get(zmq::sockopt::rcvhwm), expected);
}

// Updates lost to a full receive queue are a sequence gap: the next KVPUB,
// or else the leader's next HUGZ (which carries its last sequence), shows
// it and the follower asks for the updates after its last one (CATCHUP?)
// rather than miss them. Here the queue drops the tail of a burst: only the
// HUGZ can tell. Returns the follower's sequence when it asked.
std::uint64_t lose_updates_to_a_bounded_queue(Bounded& b) {
  BOOST_REQUIRE_EQUAL(b.follower->update_socket().get(zmq::sockopt::rcvhwm), 1);
  BOOST_REQUIRE(b.next_request());
  (void)zstore::server::try_send(b.router, chp::encode_kthxbai({0, "", {}}), b.identity);
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (b.store->last_sequence() < 1) {  // until the subscription is in place
    BOOST_REQUIRE(std::chrono::steady_clock::now() < deadline);
    b.publish(1, 10);
    std::this_thread::sleep_for(5ms);  // paces the publishing of a wait with a deadline
    b.follower->on_snapshot_socket();
    b.follower->on_update_socket();
  }
  for (std::uint64_t s = 2; s < 400; ++s) b.publish(s, 64 * 1024);  // 25 MB: more than the queues and TCP buffers
  BOOST_CHECK(b.next_request([&] { (void)zstore::server::try_send(b.pub, chp::encode_hugz({399})); }));
  BOOST_CHECK_LT(b.store->last_sequence(), 399u);
  BOOST_CHECK(!b.follower->following());
  BOOST_CHECK_EQUAL(b.command, std::string(chp::kPeerCatchup));
  BOOST_REQUIRE_EQUAL(b.argument.size(), 8u);
  std::uint64_t after = zstore::protocol::get_be<std::uint64_t>(b.argument);
  BOOST_CHECK_EQUAL(after, b.store->last_sequence());
  return after;
}

// A budget whose receive queues hold one message (it is below two of the
// largest), but which holds the whole 25 MB burst: the KVPUBs still on their
// way after the gap (in TCP buffers) are kept while the catch-up runs. With
// a budget of 1 byte they restarted the sync as a snapshot whenever one
// arrived after the CATCHUP? (a slow sanitizer build: the request never
// left, its socket closed for the new one).
constexpr std::uint64_t kQueueOfOne = 32ull << 20;

// The leader's history has them: only those are sent, applied in order, and
// the map is never cleared (it stays complete: synced throughout).
BOOST_AUTO_TEST_CASE(updates_lost_to_a_bounded_queue_are_caught_up_from_the_history) {
  Bounded b(kQueueOfOne);
  std::uint64_t after = lose_updates_to_a_bounded_queue(b);
  BOOST_CHECK(b.store->synced());
  for (std::uint64_t s = after + 1; s <= 399; ++s) {
    std::string key = s == 399 ? "last" : "k";
    (void)zstore::server::try_send(b.router, chp::encode_kvmsg({key, s, std::string(16, '\x06'), "", "v"}), b.identity);
  }
  (void)zstore::server::try_send(b.router, chp::encode_kthxbai({399, "", "resumed=1\n"}), b.identity);
  zstore::testing::wait_until(
      [&] {
        BOOST_CHECK(b.store->synced());
        b.follower->on_snapshot_socket();
        return b.follower->following();
      },
      10s);
  BOOST_REQUIRE(b.follower->following());
  BOOST_CHECK_EQUAL(b.store->last_sequence(), 399u);
  zstore::storage::ChpEntry entry;
  bool found = false;
  BOOST_CHECK(b.store->get("last", &entry, &found).ok());
  BOOST_CHECK(found);
  BOOST_CHECK(b.store->synced());
}

// A bare KTHXBAI (no resumed=1): the history no longer reaches back, so the
// follower asks for a whole snapshot.
BOOST_AUTO_TEST_CASE(a_catch_up_the_history_cannot_serve_becomes_a_snapshot) {
  Bounded b(kQueueOfOne);
  lose_updates_to_a_bounded_queue(b);
  (void)zstore::server::try_send(b.router, chp::encode_kthxbai({399, "", {}}), b.identity);
  BOOST_REQUIRE(b.next_request());
  BOOST_CHECK_EQUAL(b.command, std::string(chp::kPeerSnapshot));
  BOOST_CHECK(!b.follower->following());
}

// KVPUBs buffered while the snapshot loads are bounded by the budget too.
BOOST_AUTO_TEST_CASE(updates_buffered_during_a_snapshot_past_the_budget_restart_it) {
  Bounded b(10'000);
  BOOST_REQUIRE(b.next_request());
  std::string first = b.identity;
  auto deadline = std::chrono::steady_clock::now() + 10s;
  ReceivedMessage request;
  bool asked_again = false;
  for (std::uint64_t s = 1; !asked_again; ++s) {
    BOOST_REQUIRE_MESSAGE(std::chrono::steady_clock::now() < deadline, "no new snapshot request");
    b.publish(s, 1000);
    std::this_thread::sleep_for(1ms);  // paces the publishing of a wait with a deadline
    b.follower->on_update_socket();
    asked_again = zstore::server::try_recv(b.router, &request);
  }
  BOOST_CHECK(!b.follower->following());
}

// ---- as a read replica -------------------------------------------------------

namespace {

// A scripted upstream (ROUTER at P, PUB at P+1) and a replica-mode
// follower of it, synced once at sequence 10 with a@5 and b@10.
struct Replica {
  zstore::testing::TempDir dir;
  std::unique_ptr<zstore::storage::Database> db;
  std::unique_ptr<zstore::storage::ChpStore> store;
  zmq::context_t ctx;
  std::uint16_t port = zstore::testing::free_port_range(2);
  zmq::socket_t router{ctx, zmq::socket_type::router};
  zmq::socket_t pub{ctx, zmq::socket_type::pub};
  PendingList pending;
  std::unique_ptr<ChpFollower> follower;
  std::vector<std::uint64_t> republished;  // the applied callback's sequences
  std::string identity;
  std::vector<std::string> request;  // the latest request's frames after the identity

  explicit Replica(std::uint64_t budget = zstore::server::kDefaultReceiveBudgetBytes) {
    BOOST_REQUIRE(zstore::storage::Database::Open(dir.str(), {}, &db).ok());
    BOOST_REQUIRE(zstore::storage::ChpStore::Open(db.get(), &store).ok());
    router.bind("tcp://127.0.0.1:" + std::to_string(port));
    pub.bind("tcp://127.0.0.1:" + std::to_string(port + 1));
    std::string upstream = "tcp://127.0.0.1:" + std::to_string(port);
    follower = std::make_unique<ChpFollower>(
        ctx, *store, pending, upstream, chp::Limits{}, [] { return 0; }, zstore::security::SocketSecurity{}, budget);
    follower->as_replica({{upstream},
                          std::chrono::milliseconds(60000),
                          [this](auto applied) {
                            for (const auto& w : applied) republished.push_back(w.sequence);
                          },
                          {}});
    follower->start();
    BOOST_REQUIRE(next_request());
    BOOST_REQUIRE_EQUAL(request.size(), 2u);  // a whole snapshot
    send(chp::encode_kvmsg({"a", 5, std::string(16, '\x01'), "", "a5"}));
    send(chp::encode_kvmsg({"b", 10, std::string(16, '\x02'), "", "b10"}));
    send(chp::encode_kthxbai({10, "", {}}));
    BOOST_REQUIRE(until_following());
    BOOST_REQUIRE_EQUAL(store->last_sequence(), 10u);
  }

  void send(const zstore::protocol::Frames& frames) { (void)zstore::server::try_send(router, frames, identity); }

  void pump() {
    follower->on_update_socket();
    follower->on_snapshot_socket();
    follower->on_timer();
  }

  // Pumps the follower (calling each() every time) until a request reaches
  // the upstream within `within`; false if none did.
  bool next_request(const std::function<void()>& each = {}, std::chrono::milliseconds within = 10s) {
    auto deadline = std::chrono::steady_clock::now() + within;
    ReceivedMessage msg;
    while (std::chrono::steady_clock::now() < deadline) {
      if (zstore::server::try_recv(router, &msg)) {
        identity = std::string(msg.views[0]);
        request.assign(msg.views.begin() + 1, msg.views.end());
        return true;
      }
      if (each) each();
      pump();
      std::this_thread::sleep_for(1ms);  // a turn of a wait with a deadline; each() may pace sends by it
    }
    return false;
  }

  bool until_following() {
    return zstore::testing::wait_until(
        [&] {
          pump();
          return follower->following();
        },
        10s);
  }

  // A HUGZ above our sequence (sent until the subscription carries it)
  // makes the replica resume: the request must name sequence `after`.
  void resume_asked(std::uint64_t hugz, std::uint64_t after) {
    BOOST_REQUIRE(next_request([&] { (void)zstore::server::try_send(pub, chp::encode_hugz({hugz})); }));
    BOOST_REQUIRE_EQUAL(request.size(), 3u);
    BOOST_CHECK_EQUAL(request[0], std::string(chp::kIcanhaz));
    BOOST_CHECK_EQUAL(zstore::protocol::get_be<std::uint64_t>(request[2]), after);
  }

  std::optional<std::string> value(const std::string& key) {
    zstore::storage::ChpEntry entry;
    bool found = false;
    BOOST_REQUIRE(store->get(key, &entry, &found).ok());
    return found ? std::optional(entry.value) : std::nullopt;
  }
};

}  // namespace

// The upstream declines the resume (its history no longer reaches back)
// and answers with its whole map, whose keys come in key order: the
// replica loads that snapshot as it comes. Before, it dropped it and asked
// for the map again, so the upstream sent it twice.
BOOST_AUTO_TEST_CASE(a_declined_resume_is_loaded_as_the_snapshot_it_is_not_asked_for_again) {
  Replica r;
  r.resume_asked(20, 10);
  r.send(chp::encode_kvmsg({"a", 15, std::string(16, '\x03'), "", "a15"}));
  r.send(chp::encode_kvmsg({"c", 3, std::string(16, '\x04'), "", "c3"}));  // below ours: a snapshot's key
  r.send(chp::encode_kthxbai({20, "", {}}));
  BOOST_REQUIRE(r.until_following());
  BOOST_CHECK(!r.next_request({}, 300ms));  // nothing asked again
  BOOST_CHECK_EQUAL(r.store->last_sequence(), 20u);
  BOOST_CHECK(r.store->synced());
  BOOST_CHECK(r.value("a") == std::optional<std::string>("a15"));
  BOOST_CHECK(r.value("c") == std::optional<std::string>("c3"));
  BOOST_CHECK(!r.value("b"));  // not in the upstream's map any more
  BOOST_CHECK_EQUAL(r.follower->full_syncs(), 2u);
  BOOST_CHECK_EQUAL(r.follower->resumes(), 0u);
}

// A declined resume whose snapshot happens to look like updates (every key
// above our sequence, in order) is known only at its KTHXBAI: still loaded
// as the whole map.
BOOST_AUTO_TEST_CASE(a_declined_resume_in_sequence_order_is_loaded_as_the_whole_map) {
  Replica r;
  r.resume_asked(20, 10);
  r.send(chp::encode_kvmsg({"a", 15, std::string(16, '\x03'), "", "a15"}));
  r.send(chp::encode_kvmsg({"d", 18, std::string(16, '\x05'), "", "d18"}));
  r.send(chp::encode_kthxbai({20, "", {}}));
  BOOST_REQUIRE(r.until_following());
  BOOST_CHECK(!r.next_request({}, 300ms));
  BOOST_CHECK_EQUAL(r.store->last_sequence(), 20u);
  BOOST_CHECK(r.value("a") == std::optional<std::string>("a15"));
  BOOST_CHECK(r.value("d") == std::optional<std::string>("d18"));
  BOOST_CHECK(!r.value("b"));
  BOOST_CHECK_EQUAL(r.follower->full_syncs(), 2u);
}

// A resume (resumed=1) is applied on top of the map and republished.
BOOST_AUTO_TEST_CASE(a_resume_is_applied_on_top_of_the_map_and_republished) {
  Replica r;
  r.resume_asked(20, 10);
  r.send(chp::encode_kvmsg({"b", 15, std::string(16, '\x06'), "", "b15"}));
  r.send(chp::encode_kthxbai({20, "", "resumed=1\n"}));
  BOOST_REQUIRE(r.until_following());
  BOOST_CHECK_EQUAL(r.store->last_sequence(), 20u);
  BOOST_CHECK(r.value("a") == std::optional<std::string>("a5"));
  BOOST_CHECK(r.value("b") == std::optional<std::string>("b15"));
  BOOST_CHECK_EQUAL(r.follower->resumes(), 1u);
  BOOST_CHECK_EQUAL(r.follower->full_syncs(), 1u);
  BOOST_CHECK(r.republished == std::vector<std::uint64_t>{15});
}

// A KVPUB received during the resume that does not follow its end (the one
// before it was lost) makes the replica resume again from there, its map
// kept; before, it threw the map away for a whole new snapshot.
BOOST_AUTO_TEST_CASE(a_gap_among_the_updates_buffered_during_a_resume_resumes_again) {
  Replica r;
  r.resume_asked(20, 10);
  (void)zstore::server::try_send(r.pub, chp::encode_kvmsg({"e", 22, std::string(16, '\x07'), "", "e22"}));
  BOOST_REQUIRE(zstore::testing::wait_until(
      [&] {  // held: the resume is not answered yet
        r.follower->on_update_socket();
        return r.follower->buffered() != 0;
      },
      10s));
  r.send(chp::encode_kthxbai({20, "", "resumed=1\n"}));
  BOOST_REQUIRE(r.next_request());
  BOOST_REQUIRE_EQUAL(r.request.size(), 3u);
  BOOST_CHECK_EQUAL(zstore::protocol::get_be<std::uint64_t>(r.request[2]), 20u);
  BOOST_CHECK(r.store->synced());
  BOOST_CHECK_EQUAL(r.follower->full_syncs(), 1u);
}

// More KVPUBs during a resume than the budget holds: a replica drops the
// oldest of them and, once the resume is in, resumes again from its end
// (its map kept); before, it threw the map away for a new full snapshot,
// which a busy upstream's flow of updates could make endless.
BOOST_AUTO_TEST_CASE(updates_past_the_budget_during_a_resume_are_resumed_not_a_new_snapshot) {
  Replica r(10'000);
  r.resume_asked(20, 10);
  std::uint64_t next = 21;
  BOOST_CHECK(!r.next_request(
      [&] {
        (void)zstore::server::try_send(
            r.pub, chp::encode_kvmsg({"f", next++, std::string(16, '\x08'), "", std::string(1000, 'v')}));
      },
      500ms));
  BOOST_REQUIRE_GT(next, 40u);  // more than 10,000 bytes of them were sent
  r.send(chp::encode_kthxbai({20, "", "resumed=1\n"}));
  BOOST_REQUIRE(r.next_request());
  BOOST_REQUIRE_EQUAL(r.request.size(), 3u);
  BOOST_CHECK_EQUAL(zstore::protocol::get_be<std::uint64_t>(r.request[2]), 20u);
  BOOST_CHECK(r.store->synced());
  BOOST_CHECK_EQUAL(r.follower->full_syncs(), 1u);
}
