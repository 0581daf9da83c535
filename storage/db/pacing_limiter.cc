#include "storage/db/pacing_limiter.h"

#include <algorithm>
#include <numeric>
#include <thread>

namespace zstore::storage {

PacingLimiter::PacingLimiter(std::int64_t bytes_per_sec, std::int64_t refill_micros)
    : refill_micros_(refill_micros),
      bytes_per_sec_(bytes_per_sec),
      available_(0),
      refilled_(std::chrono::steady_clock::now()) {}

void PacingLimiter::SetBytesPerSecond(std::int64_t bytes_per_sec) {
  std::lock_guard<std::mutex> lock(mu_);
  bytes_per_sec_ = bytes_per_sec;
}

void PacingLimiter::Request(std::int64_t bytes, rocksdb::Env::IOPriority pri) { Request(bytes, pri, nullptr); }

void PacingLimiter::Request(std::int64_t bytes, rocksdb::Env::IOPriority pri, rocksdb::Statistics*) {
  std::chrono::nanoseconds wait{0};
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto now = std::chrono::steady_clock::now();
    double per_ns = static_cast<double>(bytes_per_sec_) / 1e9;
    double burst = static_cast<double>(bytes_per_sec_) * static_cast<double>(refill_micros_) / 1e6;
    available_ = std::min(burst, available_ + per_ns * static_cast<double>((now - refilled_).count()));
    refilled_ = now;
    available_ -= static_cast<double>(bytes);
    if (available_ < 0 && per_ns > 0) wait = std::chrono::nanoseconds(static_cast<std::int64_t>(-available_ / per_ns));
    auto i = std::min<std::size_t>(static_cast<std::size_t>(pri), kPriorities - 1);
    bytes_[i] += bytes;
    ++requests_[i];
  }
  if (wait.count() > 0) std::this_thread::sleep_for(wait);
}

std::int64_t PacingLimiter::GetSingleBurstBytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::max<std::int64_t>(1, bytes_per_sec_ / 1000000 * refill_micros_);
}

std::int64_t PacingLimiter::GetTotalBytesThrough(rocksdb::Env::IOPriority pri) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (pri >= rocksdb::Env::IO_TOTAL) return std::accumulate(bytes_.begin(), bytes_.end(), std::int64_t{0});
  return bytes_[static_cast<std::size_t>(pri)];
}

std::int64_t PacingLimiter::GetTotalRequests(rocksdb::Env::IOPriority pri) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (pri >= rocksdb::Env::IO_TOTAL) return std::accumulate(requests_.begin(), requests_.end(), std::int64_t{0});
  return requests_[static_cast<std::size_t>(pri)];
}

std::int64_t PacingLimiter::GetBytesPerSecond() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_per_sec_;
}

}  // namespace zstore::storage
