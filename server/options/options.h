// ServerOptions: every zstored setting, read from the command line, then
// ZSTORE_<FLAG> environment variables, then an INI --config file, then the
// built-in defaults (the first source that sets a value wins).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "storage/dafka/dafka_retention_policy.h"
#include "storage/db/database.h"
#include "protocol/cidr.h"
#include "storage/db/sync_policy.h"

namespace zstore::server {

struct ServerOptions {
  std::string data_dir = "./data";
  std::string bind = "127.0.0.1";
  std::uint16_t chp_port = 5556;  // 0 disables CHP; uses P, P+1, P+2
  storage::SyncPolicy sync = storage::SyncPolicy::kAlways;
  std::uint32_t sync_interval_ms = 100;
  std::size_t max_value_bytes = 16u << 20;
  std::uint32_t hugz_interval_ms = 1000;
  std::uint32_t snapshot_stall_ms = 30000;          // a snapshot client reading nothing this long is dropped; 0 = never
  std::uint64_t receive_buffer_bytes = 4ull << 30;  // per CHP or Dafka receive queue (server/reactor/receive_budget.h)
  std::uint64_t max_batch_bytes = 64ull << 20;      // bytes drained per loop turn (CHP updates, Dafka messages)
  std::string log_level = "info";
  std::uint64_t max_connections = 0;           // across every ZeroMQ port; 0 = what the fd limit leaves (fd_budget.h)
  std::uint64_t max_connections_per_port = 0;  // 0 = only the total cap
  std::uint64_t subscriber_buffer_bytes = 64ull << 20;  // per publisher connection (connection_watch.h); 0 = off
  std::uint64_t min_free_bytes = 1ull << 30;            // below it writes are refused; 0 = no watermark
  bool shared_core = false;  // tuning for reactors that share a core with background threads (--shared-core)
  // RocksDB's memory for all column families (storage/db/database.h).
  std::uint64_t memtable_budget_bytes = storage::kDefaultMemtableBudgetBytes;
  std::uint64_t block_cache_bytes = storage::kDefaultBlockCacheBytes;

  // Dafka store and tower.
  std::uint16_t dafka_port = 5582;          // 0 disables the store
  std::uint16_t tower_port = 5580;          // 0 disables the embedded tower; uses T, T+1
  std::uint16_t http_port = 0;              // 0 disables /healthz, /metrics and /admin
  std::uint32_t http_max_connections = 64;  // open HTTP connections at most (server/http/http_server.h)
  std::string advertise = "127.0.0.1";
  std::vector<std::string> towers;  // tcp://host:T of other towers
  std::uint32_t beacon_interval_ms = 1000;
  std::uint32_t beacon_timeout_ms = 4000;
  std::uint32_t dafka_fetch_retry_ms = 1000;         // an unanswered gap FETCH is sent again
  std::uint32_t dafka_fetch_retries = 10;            // then the gap is skipped
  std::uint64_t dafka_max_message_bytes = 1u << 20;  // a record's content, and any other frame
  // New partitions the store takes (server/dafka/dafka_limits.h); 0 = no limit.
  std::uint64_t dafka_max_topics = 10000;
  std::uint64_t dafka_max_partitions = 100000;
  std::uint64_t dafka_max_partitions_per_topic = 50000;
  std::uint64_t dafka_max_new_partitions = 1000;  // per dafka_limits_interval_ms
  std::uint32_t dafka_limits_interval_ms = 1000;
  std::uint32_t dafka_metrics_topics = 100;  // topics with their own /metrics series
  // Retention per partition (defaults: 7 days, 1 GiB, no record limit) and
  // per topic prefix ([dafka-topic PREFIX] sections of the config file).
  storage::DafkaRetentionRules dafka_retention{{7ull * 24 * 3600 * 1000, 1ull << 30, 0}, {}};
  std::uint32_t dafka_retention_interval_ms = 5000;  // between retention passes

  // CHP high availability (Binary Star); ha empty = standalone.
  std::string ha;           // "primary" or "backup"
  std::string ha_bind;      // tcp://host:port of our state publisher
  std::string ha_peer;      // tcp://host:port of the peer's state publisher
  std::string ha_peer_chp;  // tcp://host:P, the peer's CHP base port
  std::uint32_t ha_heartbeat_ms = 1000;
  // A read replica (docs/replicas.md); replica_of empty = none.
  std::vector<std::string> replica_of;  // upstream CHP bases tcp://host:P
  std::uint32_t replica_silence_ms = 3000;
  std::uint32_t replica_stale_ms = 10000;
  std::string replica_subtree;  // empty: the whole map
  // The upstream's public certificate: the upstream link is CURVE, the
  // replica authenticating with its --curve-cert. Empty: a plain link.
  std::string replica_server_key;
  std::string ha_test_cut_file;           // test seam: HA link cut while this file exists
  bool test_power_cut = false;            // test seam: unsynced writes die with the process (--test-power-cut)
  std::uint64_t chp_history = 1'000'000;  // updates kept in chp_history
  std::uint64_t chp_history_ms = 0;       // and none older than this; 0 = no age bound
  bool chp_key_history = false;           // per-key versions in chp_versions, HISTORY? (--chp-key-history)

  // Security (CURVE, rfc 26/27): empty = plain.
  std::string curve_cert;                   // our secret certificate (NAME.key_secret)
  std::string curve_allow;                  // directory of the allowed clients' NAME.key
  bool insecure = false;                    // allow plain ZeroMQ / open HTTP beyond loopback
  std::string http_token_file;              // /metrics and /admin/* need its token
  std::string backup_dir;                   // checkpoints go only under it; empty: none
  std::string acl;                          // CHP access rules file (chp_acl.h); empty: none
  std::vector<protocol::Cidr> dafka_peers;  // hosts the Dafka store may connect to; empty: any
};

// Outcome of parsing: either options to run with, or an exit code (0 after
// --help, 2 after a bad flag, value or config file) with the text to print.
struct ParseOutcome {
  std::optional<ServerOptions> options;
  int exit_code = 0;
  std::string message;
};

// Whether host (of --bind or an endpoint) is reachable only from this machine.
bool is_loopback(const std::string& host);

// env: the process environment (environ), injectable for tests.
ParseOutcome parse_options(int argc, const char* const* argv, const char* const* env);

}  // namespace zstore::server
