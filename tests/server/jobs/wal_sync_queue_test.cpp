// WalSyncQueue: a ticket is durable only once a sync that started after it
// returned; requests made during a sync share the next one; a failed sync
// fails exactly the tickets it was to cover; fd() signals each settled sync.
#include "server/jobs/wal_sync_queue.h"

#include <poll.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "tests/support/test_support.h"

using namespace std::chrono_literals;
using zstore::server::WalSyncQueue;
using zstore::storage::Status;
using zstore::testing::wait_until;

namespace {

// A sync that blocks until the test lets it return, with the result the test chose.
class GatedSync {
 public:
  Status operator()() {
    std::unique_lock lock(mu_);
    ++started_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return released_ > finished_; });
    ++finished_;
    Status s = fail_next_ ? Status::IoError("injected fsync failure") : Status::Ok();
    fail_next_ = false;
    return s;
  }
  void release(bool fail = false) {
    std::lock_guard lock(mu_);
    fail_next_ = fail;
    ++released_;
    changed_.notify_all();
  }
  int started() {
    std::lock_guard lock(mu_);
    return started_;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  int started_ = 0;
  int finished_ = 0;
  int released_ = 0;
  bool fail_next_ = false;
};

bool readable(int fd, std::chrono::milliseconds within) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(within.count())) == 1;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(wal_sync_queue)

BOOST_AUTO_TEST_CASE(a_ticket_settles_only_when_its_sync_returns) {
  GatedSync gate;
  WalSyncQueue q([&] { return gate(); });
  std::uint64_t t = q.request();
  BOOST_REQUIRE(wait_until([&] { return gate.started() == 1; }, 5s));
  BOOST_CHECK(!q.outcome(t).has_value());
  BOOST_CHECK(!readable(q.fd(), 50ms));
  gate.release();
  BOOST_REQUIRE(readable(q.fd(), 5000ms));
  q.take_signal();
  BOOST_CHECK(!readable(q.fd(), 0ms));
  BOOST_REQUIRE(q.outcome(t).has_value());
  BOOST_CHECK(*q.outcome(t));
}

BOOST_AUTO_TEST_CASE(requests_during_a_sync_share_the_next_one) {
  GatedSync gate;
  WalSyncQueue q([&] { return gate(); });
  std::uint64_t first = q.request();
  BOOST_REQUIRE(wait_until([&] { return gate.started() == 1; }, 5s));
  std::uint64_t second = q.request();
  std::uint64_t third = q.request();
  gate.release();
  q.wait(first);
  BOOST_CHECK(*q.outcome(first));
  BOOST_REQUIRE(wait_until([&] { return gate.started() == 2; }, 5s));
  BOOST_CHECK(!q.outcome(second).has_value());  // the second sync covers both and has not returned
  gate.release();
  q.wait(third);
  BOOST_CHECK(*q.outcome(second));
  BOOST_CHECK(*q.outcome(third));
  std::this_thread::sleep_for(50ms);  // no third sync follows: nothing was asked after the second began
  BOOST_CHECK_EQUAL(gate.started(), 2);
}

BOOST_AUTO_TEST_CASE(a_failed_sync_fails_only_its_tickets) {
  GatedSync gate;
  WalSyncQueue q([&] { return gate(); });
  std::uint64_t ok = q.request();
  gate.release();
  q.wait(ok);
  std::uint64_t lost = q.request();
  gate.release(true);
  q.wait(lost);
  std::uint64_t after = q.request();
  gate.release();
  q.wait(after);
  BOOST_CHECK(*q.outcome(ok));
  BOOST_CHECK(!*q.outcome(lost));
  BOOST_CHECK(*q.outcome(after));
  BOOST_CHECK_EQUAL(q.last_error(), "injected fsync failure");
}

BOOST_AUTO_TEST_CASE(wait_blocks_until_the_sync_returns) {
  GatedSync gate;
  WalSyncQueue q([&] { return gate(); });
  std::uint64_t t = q.request();
  std::atomic<bool> waited{false};
  std::thread waiter([&] {
    q.wait(t);
    waited = true;
  });
  BOOST_REQUIRE(wait_until([&] { return gate.started() == 1; }, 5s));
  std::this_thread::sleep_for(50ms);
  BOOST_CHECK(!waited);
  gate.release();
  waiter.join();
  BOOST_CHECK(waited);
}

BOOST_AUTO_TEST_CASE(destruction_serves_the_last_request) {
  std::atomic<int> syncs{0};
  {
    WalSyncQueue q([&] {
      ++syncs;
      return Status::Ok();
    });
    q.request();
  }
  BOOST_CHECK_EQUAL(syncs.load(), 1);
}

BOOST_AUTO_TEST_SUITE_END()
