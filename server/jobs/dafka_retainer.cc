#include "server/jobs/dafka_retainer.h"

#include <spdlog/spdlog.h>

#include "server/reactor/log.h"

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
  thread_.start([this] { pass(); });
}

void DafkaRetainer::stop() { thread_.stop(); }

std::uint64_t DafkaRetainer::passes() const { return passes_.load(); }

void DafkaRetainer::pass() {
  storage::DafkaRetentionPass pass;
  auto started = std::chrono::steady_clock::now();
  storage::Status s = retention_.run(log_.now_ms(), &pass);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  if (!s.ok()) {
    error_log_.log(spdlog::level::err, "Dafka retention: {} (tried again in {} ms)", s.message(), interval_.count());
  } else if (pass.records_deleted > 0 || pass.partitions_dropped > 0) {
    spdlog::info(
        "Dafka retention: {} record(s) ({} bytes) deleted from {} partition(s), {} idle partition(s) "
        "removed, in {} ms",
        pass.records_deleted, pass.bytes_deleted, pass.partitions_trimmed, pass.partitions_dropped, ms.count());
  }
  ++passes_;
}

}  // namespace zstore::server
