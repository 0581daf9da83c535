#include "server/jobs/disk_watch.h"

#include <sys/statvfs.h>

#include <spdlog/spdlog.h>

namespace zstore::server {

std::optional<std::uint64_t> DiskWatch::statvfs_free(const std::string& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(st.f_bavail) * static_cast<std::uint64_t>(st.f_frsize);
}

DiskWatch::DiskWatch(storage::Database& db, std::uint64_t min_free_bytes, std::chrono::milliseconds interval,
                     Probe probe)
    : db_(db), min_free_bytes_(min_free_bytes), interval_(interval), probe_(std::move(probe)) {}

DiskWatch::~DiskWatch() { stop(); }

void DiskWatch::start() {
  if (!enabled()) return;
  check();
  thread_.start([this] { check(); });
}

void DiskWatch::stop() { thread_.stop(); }

void DiskWatch::check() {
  if (!enabled()) return;
  auto free = probe_(db_.dir());
  if (!free) return;
  free_.store(*free, std::memory_order_relaxed);
  bool low = *free < min_free_bytes_;
  if (low == low_.load(std::memory_order_acquire)) return;
  if (low) {
    db_.refuse_writes("disk almost full: " + std::to_string(*free) + " bytes free in '" + db_.dir() +
                      "', below --min-free-bytes " + std::to_string(min_free_bytes_));
    episodes_.fetch_add(1, std::memory_order_relaxed);
    spdlog::error(
        "disk almost full: {} bytes free in '{}', below --min-free-bytes {}: refusing CHP updates and "
        "Dafka records until it is above again (reads, snapshots and FETCHes go on)",
        *free, db_.dir(), min_free_bytes_);
  } else {
    db_.accept_writes();
    spdlog::warn("disk space back: {} bytes free in '{}' (--min-free-bytes {}): accepting writes again", *free,
                 db_.dir(), min_free_bytes_);
  }
  low_.store(low, std::memory_order_release);
}

}  // namespace zstore::server
