// Stopwatch: the wall time, the calling thread's CPU time and the process's
// CPU time (RocksDB's flush and compaction threads too) of what a store mode
// measures, less the sections run through exclude(): the bench preparing
// its next batch (formatting keys, filling values) is not the store's work.
#pragma once

#include <chrono>
#include <cstdint>
#include <utility>

#include "tools/bench/store_paths.h"

namespace zstore::bench {

class Stopwatch {
 public:
  // The process's clock is read before the thread's at the start and after
  // it at the stop, so the process's span covers the thread's.
  Stopwatch();

  // Runs f and leaves its thread CPU and wall time out of the measure (the
  // process's CPU meanwhile on other threads stays in).
  template <class F>
  void exclude(F&& f) {
    auto start = std::chrono::steady_clock::now();
    double cpu = thread_cpu_seconds();
    std::forward<F>(f)();
    excluded_cpu_ += thread_cpu_seconds() - cpu;
    excluded_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  void stop(StoreRun* run, std::uint64_t messages) const;

  static double thread_cpu_seconds();

 private:
  std::chrono::steady_clock::time_point start_;
  double process0_;
  double thread0_;
  double excluded_cpu_ = 0;
  double excluded_seconds_ = 0;
};

// Runs f, through watch->exclude() when there is a watch.
template <class F>
void unmeasured(Stopwatch* watch, F&& f) {
  if (watch != nullptr) {
    watch->exclude(std::forward<F>(f));
  } else {
    std::forward<F>(f)();
  }
}

}  // namespace zstore::bench
