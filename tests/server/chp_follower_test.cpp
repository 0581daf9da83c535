// ChpFollower against a scripted leader (ROUTER + PUB on loopback): what
// the passive still holds as pending once its snapshot is loaded.
#include "server/chp_follower.h"

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <zmq.hpp>

#include "protocol/byte_order.h"
#include "protocol/chp_codec.h"
#include "server/receive_budget.h"
#include "server/zmq_frames.h"
#include "storage/chp_store.h"
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
  pending.add(kvset("k", std::string(16, '\x01'), ""));   // the delete, after our request
  pending.add(kvset("j", std::string(16, '\x02'), "old"));  // overwritten in the leader since

  ReceivedMessage request;
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!zstore::server::try_recv(router, &request)) {
    BOOST_REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(5ms);
  }
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
    follower = std::make_unique<ChpFollower>(ctx, *store, pending, "tcp://127.0.0.1:" + std::to_string(port),
                                             chp::Limits{}, [] { return 0; }, zstore::security::SocketSecurity{}, budget);
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
      std::this_thread::sleep_for(1ms);
    }
    return false;
  }

  void publish(std::uint64_t sequence, std::size_t value_bytes) {
    (void)zstore::server::try_send(pub, chp::encode_kvmsg({"k", sequence, std::string(16, '\x05'), "",
                                                           std::string(value_bytes, 'v')}));
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
    std::this_thread::sleep_for(5ms);
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
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!b.follower->following() && std::chrono::steady_clock::now() < deadline) {
    BOOST_CHECK(b.store->synced());
    b.follower->on_snapshot_socket();
    std::this_thread::sleep_for(1ms);
  }
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
    std::this_thread::sleep_for(1ms);
    b.follower->on_update_socket();
    asked_again = zstore::server::try_recv(b.router, &request);
  }
  BOOST_CHECK(!b.follower->following());
}
