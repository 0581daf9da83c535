// Logging: spdlog set up for zstored (one line per event, leveled), and a
// rate-limited log line for events triggered by peers or failing storage,
// so a flood of bad input or errors cannot flood the log.
#pragma once

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

namespace zstore::server {

// Sets the global level ("trace" .. "error") and line format.
void init_logging(const std::string& level);

// Allows at most `burst` events per `period`; counts the ones it refused.
// Not thread-safe: one per reactor.
class RateLimiter {
 public:
  explicit RateLimiter(std::uint32_t burst = 10, std::chrono::milliseconds period = std::chrono::seconds(1))
      : burst_(burst), period_(period) {}

  // Logs the formatted line at level if allow() lets it, ending with
  // " (N similar suppressed)" when N lines were refused since the last one.
  // A refused line is not formatted.
  template <typename... Args>
  void log(spdlog::level::level_enum level, spdlog::format_string_t<Args...> format, Args&&... args) {
    std::uint64_t suppressed = 0;
    if (!allow(&suppressed)) return;
    std::string line = fmt::format(format, std::forward<Args>(args)...);
    if (suppressed != 0) line += " (" + std::to_string(suppressed) + " similar suppressed)";
    spdlog::log(level, "{}", line);
  }

 private:
  // True if the event may be logged now. *suppressed receives the number of
  // events refused since the last allowed one.
  bool allow(std::uint64_t* suppressed);

  std::uint32_t burst_;
  std::chrono::milliseconds period_;
  std::chrono::steady_clock::time_point window_start_{};
  std::uint32_t in_window_ = 0;
  std::uint64_t suppressed_ = 0;
};

}  // namespace zstore::server
