// PacingLimiter: a RocksDB rate limiter, a token bucket holding at most one
// refill period's bytes that never queues a request. A request takes its
// bytes and, if that leaves the bucket in debt, sleeps until the debt is
// paid at the current rate, so a waiter needs no one to wake it. Used for
// flushes and compactions (background_pacing.h). (The GenericRateLimiter of Debian's RocksDB 7.8
// can leave a compaction waiting forever on its condition variable when a
// flush waits beside it, RocksDB issue 11742: the database then never
// closed in chp_store_test.)
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include <rocksdb/env.h>
#include <rocksdb/rate_limiter.h>

namespace zstore::storage {

class PacingLimiter final : public rocksdb::RateLimiter {
 public:
  PacingLimiter(std::int64_t bytes_per_sec, std::int64_t refill_micros);

  void SetBytesPerSecond(std::int64_t bytes_per_sec) override;
  void Request(std::int64_t bytes, rocksdb::Env::IOPriority pri) override;
  void Request(std::int64_t bytes, rocksdb::Env::IOPriority pri, rocksdb::Statistics* stats) override;
  using rocksdb::RateLimiter::Request;
  std::int64_t GetSingleBurstBytes() const override;
  std::int64_t GetTotalBytesThrough(rocksdb::Env::IOPriority pri = rocksdb::Env::IO_TOTAL) const override;
  std::int64_t GetTotalRequests(rocksdb::Env::IOPriority pri = rocksdb::Env::IO_TOTAL) const override;
  std::int64_t GetBytesPerSecond() const override;

 private:
  static constexpr std::size_t kPriorities = rocksdb::Env::IO_TOTAL;

  const std::int64_t refill_micros_;
  mutable std::mutex mu_;
  std::int64_t bytes_per_sec_;
  double available_;  // bytes; negative: the debt sleeping requests pay
  std::chrono::steady_clock::time_point refilled_;
  std::array<std::int64_t, kPriorities> bytes_{};
  std::array<std::int64_t, kPriorities> requests_{};
};

}  // namespace zstore::storage
