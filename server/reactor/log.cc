#include "server/reactor/log.h"

#include <spdlog/spdlog.h>

namespace zstore::server {

void init_logging(const std::string& level) {
  spdlog::set_level(spdlog::level::from_str(level));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%n] %v");
  spdlog::flush_on(spdlog::level::info);
}

bool RateLimiter::allow(std::uint64_t* suppressed) {
  auto now = std::chrono::steady_clock::now();
  if (now - window_start_ >= period_) {
    window_start_ = now;
    in_window_ = 0;
  }
  if (in_window_ >= burst_) {
    ++suppressed_;
    return false;
  }
  ++in_window_;
  *suppressed = suppressed_;
  suppressed_ = 0;
  return true;
}

}  // namespace zstore::server
