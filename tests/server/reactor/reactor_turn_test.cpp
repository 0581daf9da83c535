// The reactors' one error policy (server/reactor/reactor_turn.h): a failing event is
// counted and skipped, a terminated context or a stop ends the loop, and
// bad_alloc or a failure between a store write and its announcement ends
// the process (checked in a forked child).
#include "server/reactor/reactor_turn.h"

#include <boost/test/unit_test.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <new>
#include <stdexcept>

using zstore::server::after_store_write;
using zstore::server::guarded_turn;
using zstore::server::kExitReactorFault;
using zstore::server::RateLimiter;

BOOST_AUTO_TEST_CASE(a_failing_event_is_counted_and_the_loop_goes_on) {
  RateLimiter log;
  std::atomic<std::uint64_t> errors{0};
  BOOST_CHECK(guarded_turn("test", log, errors, []() -> bool { throw std::runtime_error("bug"); }));
  BOOST_CHECK(guarded_turn("test", log, errors, []() -> bool { throw std::length_error("too long"); }));
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

namespace {

// The exit status of body() run in a child process (-1: it did not exit).
int exit_status_of(const std::function<void()>& body) {
  pid_t pid = fork();
  if (pid == 0) {
    body();
    _exit(0);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

}  // namespace

BOOST_AUTO_TEST_CASE(out_of_memory_ends_the_process) {
  BOOST_CHECK_EQUAL(exit_status_of([] {
                      RateLimiter log;
                      std::atomic<std::uint64_t> errors{0};
                      (void)guarded_turn("test", log, errors, []() -> bool { throw std::bad_alloc(); });
                    }),
                    kExitReactorFault);
}

BOOST_AUTO_TEST_CASE(a_failure_after_a_store_write_ends_the_process_and_success_goes_on) {
  BOOST_CHECK_EQUAL(exit_status_of([] {
                      RateLimiter log;
                      std::atomic<std::uint64_t> errors{0};
                      (void)guarded_turn("test", log, errors, [] {
                        after_store_write("test", [] { throw zmq::error_t(EHOSTUNREACH); });
                        return true;
                      });
                    }),
                    kExitReactorFault);
  int announced = 0;
  after_store_write("test", [&] { ++announced; });
  BOOST_CHECK_EQUAL(announced, 1);
}
