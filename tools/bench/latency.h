// Latency samples of one benchmark phase and their percentiles.
//
// A sample is (receive time, latency), both in steady_clock nanoseconds, so
// a caller can keep only the samples received inside a time window (e.g.
// while a snapshot was being sent). Not thread-safe: one recorder per thread,
// merged afterwards. Samples are kept in a deque: a vector's doubling copied
// megabytes on the receiving thread and stalled it for tens of milliseconds,
// which showed as the same latency spikes in every server measured.
#pragma once

#include <cstdint>
#include <deque>

namespace zstore::bench {

// steady_clock now, in nanoseconds since its epoch.
std::int64_t now_ns();

struct Sample {
  std::int64_t received_ns = 0;
  std::int64_t latency_ns = 0;
};

class Latencies {
 public:
  void add(std::int64_t received_ns, std::int64_t latency_ns) { samples_.push_back({received_ns, latency_ns}); }
  void merge(const Latencies& other);
  // The samples received in [from_ns, to_ns).
  Latencies window(std::int64_t from_ns, std::int64_t to_ns) const;
  std::size_t size() const { return samples_.size(); }
  // The q-quantile (0 < q <= 1) in milliseconds; 0 when there is no sample.
  double quantile_ms(double q) const;

 private:
  std::deque<Sample> samples_;
};

}  // namespace zstore::bench
