// HeapTrimmer: gives the heap's free pages back to the system every
// interval (glibc's malloc_trim(0), on a thread of its own). glibc returns
// only the top of a heap by itself, so after a burst of small blocks (the
// messages queued for a flood of snapshot clients that never read) the
// freed pages between live blocks stayed resident. Nothing under ASan or
// TSan, whose allocators replace glibc's.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "server/jobs/periodic_thread.h"

namespace zstore::server {

class HeapTrimmer {
 public:
  static constexpr std::chrono::milliseconds kDefaultInterval{5000};

  explicit HeapTrimmer(std::chrono::milliseconds interval = kDefaultInterval) : thread_(interval) {}
  HeapTrimmer(const HeapTrimmer&) = delete;
  HeapTrimmer& operator=(const HeapTrimmer&) = delete;

  void start();
  void stop() { thread_.stop(); }
  // Passes run so far (tests).
  std::uint64_t passes() const { return passes_.load(std::memory_order_relaxed); }
  // One pass now, on the caller's thread: whether memory was released.
  static bool trim();

 private:
  PeriodicThread thread_;
  std::atomic<std::uint64_t> passes_{0};
};

}  // namespace zstore::server
