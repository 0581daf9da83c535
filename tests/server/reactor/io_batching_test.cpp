// IoBatching: a context's I/O threads are SCHED_BATCH exactly while some
// vote is set, other contexts' threads are left alone, and a ChpServer
// votes only while a snapshot streams.
#include "server/reactor/io_batching.h"

#include <sched.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "protocol/chp_codec.h"
#include "server/chp/chp_server.h"
#include "storage/chp/chp_store.h"
#include "storage/db/database.h"
#include "tests/support/chp_peer.h"
#include "tests/support/test_support.h"

using zstore::server::IoBatching;
using namespace std::chrono_literals;
namespace chp = zstore::protocol::chp;

namespace {

// The thread of this process named exactly `name`; 0 while there is none.
pid_t thread_named(const std::string& name) {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string line;
    if (std::getline(comm, line) && line == name) return static_cast<pid_t>(std::stol(task.path().filename()));
  }
  return 0;
}

// A context with its IoBatching, its I/O thread started (by a socket) and found.
struct Context {
  zmq::context_t ctx;
  IoBatching batching{ctx};
  zmq::socket_t socket{ctx, zmq::socket_type::pub};
  pid_t io = 0;
  Context() {
    BOOST_REQUIRE(
        zstore::testing::wait_until([&] { return (io = thread_named(batching.io_thread_prefix() + "0")) != 0; }));
  }
  int policy() const { return sched_getscheduler(io); }
};

}  // namespace

BOOST_AUTO_TEST_CASE(io_threads_batch_while_any_vote_is_set) {
  Context c;
  BOOST_TEST(c.policy() == SCHED_OTHER);
  IoBatching::Vote a(&c.batching);
  IoBatching::Vote b(&c.batching);
  a.set(true);
  BOOST_TEST(c.policy() == SCHED_BATCH);
  BOOST_TEST(c.batching.batching());
  b.set(true);
  a.set(true);  // the same vote twice counts once
  a.set(false);
  BOOST_TEST(c.policy() == SCHED_BATCH);  // b still streams
  b.set(false);
  BOOST_TEST(c.policy() == SCHED_OTHER);
  BOOST_TEST(!c.batching.batching());
  a.set(false);  // already off: still no vote
  b.set(true);
  BOOST_TEST(c.policy() == SCHED_BATCH);
}

BOOST_AUTO_TEST_CASE(a_vote_ends_with_its_owner) {
  Context c;
  {
    IoBatching::Vote v(&c.batching);
    v.set(true);
    BOOST_TEST(c.policy() == SCHED_BATCH);
  }
  BOOST_TEST(c.policy() == SCHED_OTHER);
  IoBatching::Vote none(nullptr);
  none.set(true);  // no IoBatching: nothing happens
  none.set(false);
}

BOOST_AUTO_TEST_CASE(other_contexts_keep_their_scheduling) {
  Context one;
  Context two;
  BOOST_TEST(one.batching.io_thread_prefix() != two.batching.io_thread_prefix());
  IoBatching::Vote v(&one.batching);
  v.set(true);
  BOOST_TEST(one.policy() == SCHED_BATCH);
  BOOST_TEST(two.policy() == SCHED_OTHER);
}

BOOST_AUTO_TEST_CASE(backlog_vote_sets_at_a_large_turn_and_clears_at_a_small_one) {
  Context c;
  using Backlog = IoBatching::BacklogVote;
  Backlog v(&c.batching, 100'000);
  BOOST_TEST(v.on() == Backlog::kMaxOn);
  BOOST_TEST(v.off() == Backlog::kMaxOn / 8);
  v.drained(v.on() - 1);
  BOOST_TEST(c.policy() == SCHED_OTHER);
  v.drained(v.on());
  BOOST_TEST(c.policy() == SCHED_BATCH);
  v.drained(v.off());  // between the two: unchanged
  BOOST_TEST(c.policy() == SCHED_BATCH);
  v.drained(v.off() - 1);
  BOOST_TEST(c.policy() == SCHED_OTHER);
  v.drained(v.on() - 1);
  BOOST_TEST(c.policy() == SCHED_OTHER);
  BOOST_TEST(c.batching.batch_periods() == 1u);
}

// A turn drains only what the receive queue holds (and what the I/O thread
// adds meanwhile): the vote is reachable from one full queue.
BOOST_AUTO_TEST_CASE(backlog_vote_threshold_fits_in_the_receive_queue) {
  using Backlog = IoBatching::BacklogVote;
  Backlog small(nullptr, 256);  // the default budget over 16 MiB values
  BOOST_TEST(small.on() == 128u);
  BOOST_TEST(small.off() == 16u);
  Backlog tiny(nullptr, 1);
  BOOST_TEST(tiny.on() == 2u);
  BOOST_TEST(tiny.off() == 1u);
}

namespace {

// A ChpServer on a temp database holding `keys` keys of 240 bytes, its
// context's I/O threads under `c`'s IoBatching.
struct ChpServerFixture {
  zstore::testing::TempDir dir;
  std::unique_ptr<zstore::storage::Database> db;
  std::unique_ptr<zstore::storage::ChpStore> store;
  Context c;
  zstore::server::ChpMetrics metrics;
  zstore::server::ChpServerConfig config;
  std::unique_ptr<zstore::server::ChpServer> server;

  explicit ChpServerFixture(std::size_t keys, std::function<std::uint64_t()> now_ms = {}) {
    BOOST_REQUIRE(zstore::storage::Database::Open(dir.str(), {}, &db).ok());
    BOOST_REQUIRE(zstore::storage::ChpStore::Open(db.get(), &store).ok());
    std::vector<zstore::storage::ChpWrite> writes(keys);
    for (std::size_t i = 0; i < keys; ++i) {
      writes[i].key = "k/" + std::to_string(i);
      writes[i].value.assign(240, 'v');
    }
    BOOST_REQUIRE(store->apply(writes).ok());
    config.port = zstore::testing::free_port_range(3);
    config.io_batching = &c.batching;
    config.now_ms = std::move(now_ms);
    server = std::make_unique<zstore::server::ChpServer>(c.ctx, *store, config, metrics);
    server->start();
  }
  ~ChpServerFixture() {
    server->stop();
    server.reset();
    store.reset();
    BOOST_TEST(db->close().ok());
  }
};

}  // namespace

// A real ChpServer: batching from the moment a snapshot streams (its
// client reads nothing, so it stays open) until it ends.
BOOST_AUTO_TEST_CASE(chp_server_batches_while_a_snapshot_streams) {
  constexpr std::size_t kKeys = 50000;  // 12 MB: more than the pipes and socket buffers hold
  ChpServerFixture f(kKeys);
  Context& c = f.c;
  BOOST_TEST(c.policy() == SCHED_OTHER);

  zmq::socket_t client(c.ctx, zmq::socket_type::dealer);
  client.set(zmq::sockopt::rcvhwm, 10);
  client.set(zmq::sockopt::rcvbuf, 4096);
  client.connect("tcp://127.0.0.1:" + std::to_string(f.config.port));
  auto request = chp::encode_icanhaz({"", std::nullopt});
  for (std::size_t i = 0; i < request.size(); ++i) {
    client.send(zmq::buffer(request[i]), i + 1 < request.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
  BOOST_TEST_REQUIRE(zstore::testing::wait_until([&] { return c.batching.batching(); }));
  BOOST_TEST(c.policy() == SCHED_BATCH);

  std::size_t keys = 0;
  bool done = false;
  auto deadline = std::chrono::steady_clock::now() + zstore::testing::scaled(60s);
  while (!done && std::chrono::steady_clock::now() < deadline) {
    zmq::message_t first;
    if (!client.recv(first, zmq::recv_flags::dontwait)) {
      zmq::pollitem_t item{client.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, 100ms);
      continue;
    }
    done = first.to_string_view() == chp::kKthxbai;
    keys += done ? 0 : 1;
    for (bool more = first.more(); more;) {
      zmq::message_t part;
      (void)client.recv(part);
      more = part.more();
    }
  }
  BOOST_TEST_REQUIRE(done);
  BOOST_TEST(keys == kKeys);
  BOOST_TEST(zstore::testing::wait_until([&] { return !c.batching.batching(); }));
  BOOST_TEST(c.policy() == SCHED_OTHER);
}

namespace {

// A wall clock the test can hold: while held, the reactor's next clock
// read (one a turn that drains the collector) waits until release, so
// whatever arrives meanwhile piles up in its receive queue.
class HeldClock {
 public:
  std::function<std::uint64_t()> fn() {
    return [this] {
      std::unique_lock lock(mu_);
      if (held_) {
        ++waits_;
        cv_.notify_all();
        cv_.wait(lock, [&] { return !held_; });
      }
      return static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
              .count());
    };
  }
  void hold() {
    std::lock_guard lock(mu_);
    held_ = true;
  }
  // Waits (bounded) until the reactor waits on the held clock.
  bool wait_reactor_held(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return waits_ > taken_; }) && (taken_ = waits_, true);
  }
  void release() {
    std::lock_guard lock(mu_);
    held_ = false;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_ = false;
  std::uint64_t waits_ = 0;
  std::uint64_t taken_ = 0;
};

}  // namespace

// The reactor is held while a burst of KVSETs arrives, so its next turn
// drains a full receive queue: the I/O threads batch. Single updates
// afterwards end it. (Without the hold whether a turn drains a full queue
// is the scheduler's choice: CI runs failed that way.) The queue fills
// from loopback while the reactor is held; each attempt holds longer, in
// case the I/O thread was slow to fill it.
BOOST_AUTO_TEST_CASE(chp_server_batches_while_behind_on_updates) {
  HeldClock clock;
  ChpServerFixture f(0, clock.fn());
  zmq::context_t client_ctx(1);
  zstore::testing::ChpPeer peer(client_ctx, "tcp://127.0.0.1", f.config.port);
  BOOST_REQUIRE(peer.wait_connected());
  const std::uint64_t burst =
      4 * static_cast<std::uint64_t>(zstore::server::receive_hwm(f.config.receive_budget_bytes, f.config.limits));
  auto hold_for = 50ms;
  for (int attempt = 0; attempt < 5 && f.c.batching.batch_periods() == 0; ++attempt, hold_for *= 2) {
    std::uint64_t before = f.metrics.updates_applied.load();
    clock.hold();
    peer.set("gate", std::to_string(attempt));
    BOOST_TEST_REQUIRE(clock.wait_reactor_held(zstore::testing::scaled(10s)));
    for (std::uint64_t i = 0; i < burst; ++i) peer.set("burst/" + std::to_string(i), std::string(100, 'b'));
    std::this_thread::sleep_for(hold_for);  // the hold is the subject: loopback fills the queue meanwhile
    clock.release();
    BOOST_TEST_REQUIRE(
        zstore::testing::wait_until([&] { return f.metrics.updates_applied.load() >= before + burst + 1; }, 60s));
  }
  BOOST_TEST(f.c.batching.batch_periods() >= 1u);
  // One update at a time: each turn drains fewer than off().
  for (int i = 0; i < 20 && f.c.batching.batching(); ++i) {
    peer.set("single", std::to_string(i));
    (void)peer.wait_kvpub("single", 5s);
  }
  BOOST_TEST(!f.c.batching.batching());
  BOOST_TEST(f.c.policy() == SCHED_OTHER);
}
