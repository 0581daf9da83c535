// DafkaRetainer: Dafka retention on a thread of its own. Every interval it
// runs one DafkaRetention pass (storage/dafka/dafka_retention.h) over the log,
// so the Dafka store reactor never deletes or scans; the reactor and the
// retainer only share the log's mutex for one small write at a time. A pass
// that deleted something logs one info line; storage errors are logged
// (rate-limited) and the next pass tries again. Retention goes on while
// writes are refused (disk watermark): it is what frees the space.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "server/reactor/log.h"
#include "server/jobs/periodic_thread.h"
#include "storage/dafka/dafka_retention.h"

namespace zstore::server {

class DafkaRetainer {
 public:
  // db and log must outlive the retainer.
  DafkaRetainer(storage::Database& db, storage::DafkaLog& log, storage::DafkaRetentionRules rules,
                std::chrono::milliseconds interval);
  ~DafkaRetainer();
  DafkaRetainer(const DafkaRetainer&) = delete;
  DafkaRetainer& operator=(const DafkaRetainer&) = delete;

  void start();
  // Joins the thread (after the pass in progress). Idempotent.
  void stop();
  // Passes completed so far (tests).
  std::uint64_t passes() const;

 private:
  void pass();

  storage::DafkaLog& log_;
  storage::DafkaRetention retention_;
  std::chrono::milliseconds interval_;
  RateLimiter error_log_;  // the retainer thread's only
  std::atomic<std::uint64_t> passes_{0};
  PeriodicThread thread_{interval_};
};

}  // namespace zstore::server
