#include "tools/bench/stopwatch.h"

#include <time.h>

namespace zstore::bench {
namespace {

// CLOCK_THREAD_CPUTIME_ID (the calling thread) or CLOCK_PROCESS_CPUTIME_ID
// (every thread: RocksDB's flush and compaction too; the bench runs no
// other thread of its own meanwhile), to the nanosecond.
double cpu_seconds_of(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

Stopwatch::Stopwatch()
    : start_(std::chrono::steady_clock::now()),
      process0_(cpu_seconds_of(CLOCK_PROCESS_CPUTIME_ID)),
      thread0_(thread_cpu_seconds()) {}

double Stopwatch::thread_cpu_seconds() { return cpu_seconds_of(CLOCK_THREAD_CPUTIME_ID); }

void Stopwatch::stop(StoreRun* run, std::uint64_t messages) const {
  run->thread_cpu = thread_cpu_seconds() - thread0_ - excluded_cpu_;
  run->process_cpu = cpu_seconds_of(CLOCK_PROCESS_CPUTIME_ID) - process0_ - excluded_cpu_;
  run->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() - excluded_seconds_;
  run->messages = messages;
}

}  // namespace zstore::bench
