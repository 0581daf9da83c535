// DiskWatch: zstored writes only while the data directory's file system
// has at least min_free_bytes free, so a full disk is met by a clean,
// reversible refusal rather than by ENOSPC in the middle of a flush. A
// thread of its own measures the free space every interval (statvfs, or an
// injected probe in tests), never per write. Below the watermark it makes
// the Database refuse every write (CHP updates are then not published,
// Dafka records not ACKed; reads, snapshots and FETCHes go on), logs it
// once and counts it; back above it, writes are accepted again.
// min_free_bytes 0 disables the watch. Thread-safe readers for metrics.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "server/jobs/periodic_thread.h"
#include "storage/db/database.h"

namespace zstore::server {

inline constexpr std::uint64_t kDefaultMinFreeBytes = 1ull << 30;

class DiskWatch {
 public:
  // Free bytes available to an unprivileged writer on dir's file system;
  // nullopt when it cannot be measured (then nothing changes).
  using Probe = std::function<std::optional<std::uint64_t>(const std::string& dir)>;
  static std::optional<std::uint64_t> statvfs_free(const std::string& dir);

  DiskWatch(storage::Database& db, std::uint64_t min_free_bytes, std::chrono::milliseconds interval,
            Probe probe = statvfs_free);
  ~DiskWatch();
  DiskWatch(const DiskWatch&) = delete;
  DiskWatch& operator=(const DiskWatch&) = delete;

  // Checks once (so a start on a full disk refuses from the first write),
  // then every interval on its thread. Nothing when disabled.
  void start();
  void stop();
  // One measurement now, applied to the database.
  void check();

  bool enabled() const { return min_free_bytes_ > 0; }
  bool low() const { return low_.load(std::memory_order_acquire); }
  std::uint64_t free_bytes() const { return free_.load(std::memory_order_relaxed); }
  std::uint64_t min_free_bytes() const { return min_free_bytes_; }
  std::uint64_t low_episodes() const { return episodes_.load(std::memory_order_relaxed); }

 private:
  storage::Database& db_;
  std::uint64_t min_free_bytes_;
  std::chrono::milliseconds interval_;
  Probe probe_;
  std::atomic<bool> low_{false};
  std::atomic<std::uint64_t> free_{0};
  std::atomic<std::uint64_t> episodes_{0};
  PeriodicThread thread_{interval_};
};

}  // namespace zstore::server
