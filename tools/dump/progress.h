// Progress of a long dump on stderr: once a dump has run for `after`
// (2 s by default), a line "\rzstore-dump: N keys, R/s" is rewritten at most
// twice a second, and finish() ends it with a newline. Disabled (silent) when
// the stream is not a terminal; the caller decides (isatty(2)).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace zstore::dump {

class Progress {
 public:
  using Clock = std::chrono::steady_clock;

  Progress(std::ostream& out, bool enabled, std::string unit, std::chrono::milliseconds after = std::chrono::seconds(2),
           std::function<Clock::time_point()> now = Clock::now);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // One more item dumped.
  void tick();
  // Prints the final count if anything was printed; idempotent.
  void finish();

  std::uint64_t count() const { return count_; }

 private:
  void print(Clock::time_point now);

  std::ostream& out_;
  bool enabled_;
  std::string unit_;
  std::chrono::milliseconds after_;
  std::function<Clock::time_point()> now_;
  Clock::time_point start_;
  Clock::time_point last_print_{};
  std::uint64_t count_ = 0;
  bool printed_ = false;
  bool finished_ = false;
};

}  // namespace zstore::dump
