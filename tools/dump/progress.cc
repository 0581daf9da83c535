#include "tools/dump/progress.h"

#include <cstdio>

namespace zstore::dump {
namespace {

constexpr std::uint64_t kCheckEvery = 256;  // items between clock reads
constexpr auto kPrintInterval = std::chrono::milliseconds(500);

}  // namespace

Progress::Progress(std::ostream& out, bool enabled, std::string unit, std::chrono::milliseconds after,
                   std::function<Clock::time_point()> now)
    : out_(out), enabled_(enabled), unit_(std::move(unit)), after_(after), now_(std::move(now)), start_(now_()) {}

Progress::~Progress() { finish(); }

void Progress::tick() {
  ++count_;
  if (!enabled_ || count_ % kCheckEvery != 0) return;
  auto now = now_();
  if (now - start_ < after_ || (printed_ && now - last_print_ < kPrintInterval)) return;
  print(now);
}

void Progress::print(Clock::time_point now) {
  double seconds = std::chrono::duration<double>(now - start_).count();
  double rate = seconds > 0 ? static_cast<double>(count_) / seconds : 0;
  char line[160];
  std::snprintf(line, sizeof line, "\rzstore-dump: %llu %s, %.0f/s, %.1f s ", static_cast<unsigned long long>(count_),
                unit_.c_str(), rate, seconds);
  out_ << line << std::flush;
  printed_ = true;
  last_print_ = now;
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (!printed_) return;
  print(now_());
  out_ << "\n" << std::flush;
}

}  // namespace zstore::dump
