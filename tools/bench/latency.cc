#include "tools/bench/latency.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace zstore::bench {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void Latencies::merge(const Latencies& other) {
  samples_.insert(samples_.end(), other.samples_.begin(), other.samples_.end());
}

Latencies Latencies::window(std::int64_t from_ns, std::int64_t to_ns) const {
  Latencies out;
  for (const Sample& s : samples_) {
    if (s.received_ns >= from_ns && s.received_ns < to_ns) out.samples_.push_back(s);
  }
  return out;
}

double Latencies::quantile_ms(double q) const {
  if (samples_.empty()) return 0.0;
  std::vector<std::int64_t> values;
  values.reserve(samples_.size());
  for (const Sample& s : samples_) values.push_back(s.latency_ns);
  // Nearest rank: the smallest value with at least q of the samples at or below it.
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
  std::size_t index = std::clamp<std::size_t>(rank, 1, values.size()) - 1;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(index), values.end());
  return static_cast<double>(values[index]) / 1e6;
}

}  // namespace zstore::bench
