// The reactors' one error policy (server/reactor_turn.h): a failing event is
// counted and skipped, only a terminated context or a stop ends the loop.
#include "server/reactor_turn.h"

#include <boost/test/unit_test.hpp>

#include <new>
#include <stdexcept>

using zstore::server::guarded_turn;
using zstore::server::RateLimiter;

BOOST_AUTO_TEST_CASE(a_failing_event_is_counted_and_the_loop_goes_on) {
  RateLimiter log;
  std::atomic<std::uint64_t> errors{0};
  BOOST_CHECK(guarded_turn("test", log, errors, []() -> bool { throw std::bad_alloc(); }));
  BOOST_CHECK(guarded_turn("test", log, errors, []() -> bool { throw std::runtime_error("bug"); }));
  BOOST_CHECK(guarded_turn("test", log, errors, []() -> bool { throw zmq::error_t(EHOSTUNREACH); }));
  BOOST_CHECK(guarded_turn("test", log, errors, []() -> bool { throw zmq::error_t(EINTR); }));  // not counted
  BOOST_CHECK_EQUAL(errors.load(), 3u);
  BOOST_CHECK(guarded_turn("test", log, errors, [] { return true; }));
  BOOST_CHECK_EQUAL(errors.load(), 3u);
}

BOOST_AUTO_TEST_CASE(a_stop_or_a_terminated_context_ends_the_loop) {
  RateLimiter log;
  std::atomic<std::uint64_t> errors{0};
  BOOST_CHECK(!guarded_turn("test", log, errors, [] { return false; }));
  zmq::context_t ctx;
  zmq::socket_t s(ctx, zmq::socket_type::pair);
  ctx.shutdown();  // every blocking call on s now fails with ETERM
  BOOST_CHECK(!guarded_turn("test", log, errors, [&] {
    zmq::message_t m;
    (void)s.recv(m);
    return true;
  }));
  BOOST_CHECK_EQUAL(errors.load(), 0u);
}
