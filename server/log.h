// Logging: spdlog set up for zstored (one line per event, leveled), and a
// rate limiter for lines triggered by peers, so a flood of bad input cannot
// flood the log.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace zstore::server {

// Sets the global level ("trace" .. "error") and line format.
void init_logging(const std::string& level);

// Allows at most `burst` events per `period`; counts the ones it refused.
// Not thread-safe: one per reactor.
class RateLimiter {
 public:
  explicit RateLimiter(std::uint32_t burst = 10, std::chrono::milliseconds period = std::chrono::seconds(1))
      : burst_(burst), period_(period) {}

  // True if the event may be logged now. *suppressed receives the number of
  // events refused since the last allowed one.
  bool allow(std::uint64_t* suppressed);

 private:
  std::uint32_t burst_;
  std::chrono::milliseconds period_;
  std::chrono::steady_clock::time_point window_start_{};
  std::uint32_t in_window_ = 0;
  std::uint64_t suppressed_ = 0;
};

}  // namespace zstore::server
