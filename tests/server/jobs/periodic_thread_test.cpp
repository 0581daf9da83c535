// PeriodicThread (server/jobs/periodic_thread.h): the job runs every interval,
// stop() wakes the wait at once, runs the at_stop step once and joins, and
// is idempotent.
#include "server/jobs/periodic_thread.h"

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "tests/support/test_support.h"

using zstore::server::PeriodicThread;
using zstore::testing::wait_until;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_CASE(the_job_runs_every_interval_until_stopped) {
  std::atomic<int> runs{0};
  std::atomic<int> stops{0};
  PeriodicThread thread(5ms);
  thread.start([&] { ++runs; }, [&] { ++stops; });
  BOOST_TEST(thread.running());
  BOOST_TEST(wait_until([&] { return runs.load() >= 3; }));
  thread.stop();
  BOOST_TEST(!thread.running());
  int after_stop = runs.load();
  std::this_thread::sleep_for(20ms);  // no run after stop(): a window of four intervals, not a wait
  BOOST_TEST(runs.load() == after_stop);
  BOOST_TEST(stops.load() == 1);
  thread.stop();  // idempotent
  BOOST_TEST(stops.load() == 1);
}

BOOST_AUTO_TEST_CASE(stop_does_not_wait_for_the_interval) {
  std::atomic<int> runs{0};
  std::atomic<int> stops{0};
  PeriodicThread thread(std::chrono::hours(1));
  thread.start([&] { ++runs; }, [&] { ++stops; });
  auto started = std::chrono::steady_clock::now();
  thread.stop();
  bool prompt = std::chrono::steady_clock::now() - started < 5s;
  BOOST_TEST(prompt);
  BOOST_TEST(runs.load() == 0);
  BOOST_TEST(stops.load() == 1);  // the at_stop step still runs (WalSyncer's last sync)
}

BOOST_AUTO_TEST_CASE(a_thread_never_started_stops_as_a_no_op) {
  PeriodicThread thread(1ms);
  BOOST_TEST(!thread.running());
  thread.stop();
  BOOST_TEST(!thread.running());
}
