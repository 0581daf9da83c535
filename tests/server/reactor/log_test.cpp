// RateLimiter::log: at most `burst` lines per period, and the first line
// after refused ones says how many were suppressed.
#include "server/reactor/log.h"

#include <spdlog/sinks/ostream_sink.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using zstore::server::RateLimiter;
using namespace std::chrono_literals;

namespace {

// Captures the default logger's lines ("level message") while it lives.
struct CapturedLog {
  std::ostringstream out;
  std::shared_ptr<spdlog::logger> previous = spdlog::default_logger();
  CapturedLog() {
    auto logger = std::make_shared<spdlog::logger>("captured", std::make_shared<spdlog::sinks::ostream_sink_st>(out));
    logger->set_pattern("%l %v");
    logger->set_level(spdlog::level::trace);
    spdlog::set_default_logger(logger);
  }
  ~CapturedLog() { spdlog::set_default_logger(previous); }
  std::vector<std::string> lines() const {
    std::vector<std::string> result;
    std::istringstream in(out.str());
    for (std::string line; std::getline(in, line);) result.push_back(line);
    return result;
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(at_most_burst_lines_per_period_are_logged_as_formatted) {
  CapturedLog log;
  RateLimiter limiter(3, std::chrono::hours(1));
  for (int i = 0; i < 10; ++i) limiter.log(spdlog::level::warn, "bad input {} from {}", i, "peer");
  BOOST_CHECK((log.lines() == std::vector<std::string>{"warning bad input 0 from peer", "warning bad input 1 from peer",
                                                       "warning bad input 2 from peer"}));
}

BOOST_AUTO_TEST_CASE(the_next_allowed_line_counts_the_suppressed_ones) {
  CapturedLog log;
  // A period no preemption between two calls outlasts (with 20 ms, a
  // thread preempted after "first" saw "second" open a window of its own).
  const auto period = 1s;
  RateLimiter limiter(1, period);
  limiter.log(spdlog::level::err, "write failed: {}", "first");  // opens the window
  auto window_start = std::chrono::steady_clock::now();
  limiter.log(spdlog::level::err, "write failed: {}", "second");
  limiter.log(spdlog::level::err, "write failed: {}", "third");
  std::this_thread::sleep_until(window_start + period);  // the next window: time passing is the subject
  limiter.log(spdlog::level::err, "write failed: {}", "fourth");
  limiter.log(spdlog::level::err, "write failed: {}", "fifth");
  BOOST_CHECK((log.lines() == std::vector<std::string>{"error write failed: first",
                                                       "error write failed: fourth (2 similar suppressed)"}));
}
