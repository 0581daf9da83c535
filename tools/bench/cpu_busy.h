// How busy one CPU was over a span of time, from /proc/stat. The store
// mode's bounds use it on the ZeroMQ-only limits: a limit whose core was
// not saturated could have gone faster, so what it cost per message is its
// core's busy time per message, not its wall time per message.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace zstore::bench {

class CpuBusySampler {
 public:
  // Samples the CPU's counters every 20 ms on a thread of its own (on the
  // creating thread's CPUs) until destroyed. cpu < 0: samples nothing.
  explicit CpuBusySampler(int cpu);
  ~CpuBusySampler();
  CpuBusySampler(const CpuBusySampler&) = delete;
  CpuBusySampler& operator=(const CpuBusySampler&) = delete;

  // The share (0..1) of time the CPU was not idle between the first sample
  // at or after from_ns and the last at or before to_ns (now_ns() times);
  // nullopt when fewer than kMinTicks clock ticks fall inside: /proc/stat
  // counts in ticks (10 ms), so a 40 ms span reads as 0.5 or 1.0 at random.
  std::optional<double> busy(std::int64_t from_ns, std::int64_t to_ns) const;

  // 20 ticks, 200 ms at the usual 100 Hz: the share is known to 5%.
  static constexpr std::uint64_t kMinTicks = 20;

 private:
  struct Sample {
    std::int64_t at_ns = 0;
    std::uint64_t busy = 0;   // ticks: user, nice, system, irq, softirq, steal
    std::uint64_t total = 0;  // ticks: busy + idle + iowait
  };
  void run();

  int cpu_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::vector<Sample> samples_;
  std::thread thread_;
};

}  // namespace zstore::bench
