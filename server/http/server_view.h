// ServerView: what the HTTP side (health, metrics, admin) may look at in a
// running zstored. Every member is safe to read from another thread: the
// metrics are atomics, ha_state reads an atomic, the Database is RocksDB,
// the Dafka log is read only through its atomic partition count, the CHP
// store through its atomic key count.
// The viewed objects must outlive every HttpServer using the view.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "server/access/auth_metrics.h"
#include "server/chp/chp_metrics.h"
#include "server/reactor/connection_watch.h"
#include "server/dafka/dafka_metrics.h"
#include "server/jobs/disk_watch.h"
#include "server/http/http_metrics.h"
#include "server/dafka/tower_metrics.h"
#include "storage/chp/chp_store.h"
#include "storage/dafka/dafka_log.h"
#include "storage/db/database.h"

namespace zstore::server {

struct ServerView {
  storage::Database* db = nullptr;
  const ChpMetrics* chp = nullptr;               // null when CHP is disabled
  const DafkaMetrics* dafka = nullptr;           // null when the Dafka store is disabled
  const TowerMetrics* tower = nullptr;           // null when the embedded tower is disabled
  const DiskWatch* disk = nullptr;               // null when --min-free-bytes is 0
  const storage::DafkaLog* dafka_log = nullptr;  // its counters (partition_count(), topic_totals(): thread-safe)
  std::size_t dafka_metrics_topics = 100;        // topics with their own /metrics series (--dafka-metrics-topics)
  const storage::ChpStore* chp_store = nullptr;  // live_keys() only (atomic); null when CHP is disabled
  std::function<std::string()> ha_state;         // standalone, primary, backup, active, passive
  const ConnectionWatch* connections = nullptr;  // ports() and limits(): atomics, fixed once started
  HttpMetrics* http = nullptr;  // the HTTP server's connections (it writes them; null: its own, unseen elsewhere)
  AuthMetrics* auth = nullptr;  // authentication failures (the HTTP server counts its 401s in it)
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

}  // namespace zstore::server
