// ReactorThread (server/reactor/reactor_thread.h): start() counts as the first beat,
// the loop beats every turn and ends on stop(), a failing turn is counted
// and skipped, stop() is idempotent, reactors do not share a stop signal,
// and the signal is a file descriptor item, not a ZeroMQ socket.
#include "server/reactor/reactor_thread.h"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>
#include <poll.h>
#include <stdexcept>
#include <thread>

using zstore::server::RateLimiter;
using zstore::server::ReactorThread;

namespace {

// A reactor whose turns wait on the stop pipe (10 ms at most) and count.
struct CountingReactor {
  std::atomic<std::int64_t> heartbeat{0};
  std::atomic<std::uint64_t> errors{0};
  std::atomic<int> turns{0};
  std::atomic<int> throw_at{-1};  // the turn that throws, -1: none
  std::promise<void> go;          // the loop starts when it is set
  RateLimiter log;
  ReactorThread reactor{heartbeat};

  void start() {
    reactor.start([this, gate = go.get_future().share()] {
      gate.wait();
      reactor.loop("test", log, errors, [this] {
        zmq::pollitem_t items[] = {reactor.stop_item()};
        zmq::poll(items, 1, std::chrono::milliseconds(10));
        if (items[0].revents & ZMQ_POLLIN) return false;
        if (++turns == throw_at) throw std::runtime_error("a bad event");
        return true;
      });
    });
  }
};

// Waits (10 s at most) until pred() holds.
template <typename Pred>
bool eventually(Pred pred) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

BOOST_AUTO_TEST_CASE(start_counts_as_the_first_beat_and_stop_clears_the_heartbeat) {
  CountingReactor r;
  BOOST_TEST(!r.reactor.running());
  r.start();
  BOOST_TEST(r.reactor.running());
  BOOST_TEST(r.heartbeat.load() != 0);  // the body has not run a turn yet
  BOOST_TEST(r.turns.load() == 0);
  r.go.set_value();
  BOOST_TEST(eventually([&] { return r.turns.load() >= 3; }));
  BOOST_TEST(r.reactor.stop());
  BOOST_TEST(!r.reactor.running());
  BOOST_TEST(r.heartbeat.load() == 0);
  BOOST_TEST(!r.reactor.stop());  // idempotent
}

BOOST_AUTO_TEST_CASE(the_heartbeat_moves_with_the_turns) {
  CountingReactor r;
  r.start();
  auto first = r.heartbeat.load();
  r.go.set_value();
  BOOST_TEST(eventually([&] { return r.heartbeat.load() > first; }));
  r.reactor.stop();
}

BOOST_AUTO_TEST_CASE(a_failing_turn_is_counted_and_the_loop_goes_on) {
  CountingReactor r;
  r.throw_at = 2;
  r.start();
  r.go.set_value();
  BOOST_TEST(eventually([&] { return r.turns.load() >= 5; }));
  BOOST_TEST(r.errors.load() == 1u);
  BOOST_TEST(r.reactor.stop());
}

BOOST_AUTO_TEST_CASE(reactors_stop_one_at_a_time) {
  CountingReactor a;
  CountingReactor b;
  a.start();
  b.start();  // its own stop signal
  a.go.set_value();
  b.go.set_value();
  BOOST_TEST(a.reactor.stop());
  int b_turns = b.turns.load();
  BOOST_TEST(eventually([&] { return b.turns.load() > b_turns; }));  // b still turns
  BOOST_TEST(b.reactor.running());
  BOOST_TEST(b.reactor.stop());
}

BOOST_AUTO_TEST_CASE(the_stop_signal_is_a_file_descriptor_readable_only_after_stop) {
  std::atomic<std::int64_t> heartbeat{0};
  std::atomic<std::uint64_t> errors{0};
  RateLimiter log;
  ReactorThread reactor{heartbeat};
  std::promise<zmq::pollitem_t> seen;
  std::atomic<int> turns{0};
  reactor.start([&] {
    seen.set_value(reactor.stop_item());
    reactor.loop("test", log, errors, [&] {
      zmq::pollitem_t items[] = {reactor.stop_item()};
      zmq::poll(items, 1, std::chrono::milliseconds(-1));  // no timeout: only stop() ends the wait
      ++turns;
      return (items[0].revents & ZMQ_POLLIN) == 0;
    });
  });
  zmq::pollitem_t item = seen.get_future().get();
  // A plain descriptor: zmq_poll checks no ZeroMQ mailbox for it.
  BOOST_TEST(item.socket == nullptr);
  BOOST_TEST(item.fd >= 0);
  pollfd fd{item.fd, POLLIN, 0};
  BOOST_TEST(::poll(&fd, 1, 0) == 0);  // not readable while the reactor runs
  BOOST_TEST(reactor.stop());
  BOOST_TEST(turns.load() == 1);  // the one wait, ended by stop()
  BOOST_TEST(heartbeat.load() == 0);
}
