#include "server/dafka_retainer.h"

#include <spdlog/spdlog.h>

#include "server/log.h"

namespace zstore::server {

DafkaRetainer::DafkaRetainer(storage::Database& db, storage::DafkaLog& log, storage::DafkaRetentionRules rules,
                             std::chrono::milliseconds interval)
    : log_(log), retention_(&db, &log, std::move(rules)), interval_(interval) {}

DafkaRetainer::~DafkaRetainer() { stop(); }

void DafkaRetainer::start() {
  if (retention_.rules().defaults.unlimited() && retention_.rules().overrides.empty()) {
    spdlog::info("Dafka retention: none (every limit is 0)");
    return;
  }
  thread_ = std::thread([this] { run(); });
}

void DafkaRetainer::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::uint64_t DafkaRetainer::passes() const {
  std::lock_guard lock(mutex_);
  return passes_;
}

void DafkaRetainer::run() {
  RateLimiter error_log;
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
    lock.unlock();
    storage::DafkaRetentionPass pass;
    auto started = std::chrono::steady_clock::now();
    storage::Status s = retention_.run(log_.now_ms(), &pass);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    if (!s.ok()) {
      error_log.log(spdlog::level::err, "Dafka retention: {} (tried again in {} ms)", s.message(), interval_.count());
    } else if (pass.records_deleted > 0 || pass.partitions_dropped > 0) {
      spdlog::info("Dafka retention: {} record(s) ({} bytes) deleted from {} partition(s), {} idle partition(s) "
                   "removed, in {} ms",
                   pass.records_deleted, pass.bytes_deleted, pass.partitions_trimmed, pass.partitions_dropped,
                   ms.count());
    }
    lock.lock();
    ++passes_;
  }
}

}  // namespace zstore::server
