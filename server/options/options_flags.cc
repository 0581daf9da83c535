// zstored's flags (options_flags.h): each one's name, default and help
// text, written once here; `zstored --help`, the man page and
// docs/configuration.md come from them (tools/gen-config-doc).
#include "server/options/options_flags.h"

namespace zstore::server {
namespace po = boost::program_options;
namespace {

void describe_retention(po::options_description& d, ServerOptions& o) {
  auto& r = o.dafka_retention.defaults;
  d.add_options()("dafka-retain-ms", po::value(&r.ms)->default_value(r.ms),
                  "Dafka records older than this are deleted (per partition); 0 = no age limit")(
      "dafka-retain-bytes", po::value(&r.bytes)->default_value(r.bytes),
      "Dafka content bytes kept per partition, the oldest records deleted first; 0 = no limit")(
      "dafka-retain-records", po::value(&r.records)->default_value(r.records),
      "Dafka records kept per partition, the oldest deleted first; 0 = no limit")(
      "dafka-retention-interval-ms",
      po::value(&o.dafka_retention_interval_ms)->default_value(o.dafka_retention_interval_ms),
      "interval of the Dafka retention passes (a background thread)");
}

void describe_dafka(po::options_description& d, ServerOptions& o, RawFlags& raw) {
  d.add_options()("dafka-port", po::value(&raw.dafka_port)->default_value(raw.dafka_port),
                  "Dafka store publisher (XPUB) port; 0 disables the store. With --curve-cert it connects only to "
                  "publishers announcing a key in --curve-allow")(
      "tower-port", po::value(&raw.tower_port)->default_value(raw.tower_port),
      "embedded Dafka tower: XSUB at T, XPUB at T+1; 0 disables it. With --curve-cert only allowed keys "
      "beacon or hear beacons")(
      "http-port", po::value(&raw.http_port)->default_value(raw.http_port),
      "HTTP port for GET /healthz, GET /metrics and POST /admin/checkpoint (bound on --bind); 0 disables it")(
      "http-max-connections", po::value(&o.http_max_connections)->default_value(o.http_max_connections),
      "HTTP connections open at once at most (1..65536); past it a new one evicts the oldest that has not "
      "sent its whole request yet")("advertise", po::value(&o.advertise)->default_value(o.advertise),
                                    "host other Dafka nodes use to reach this store")(
      "towers", po::value(&raw.towers),
      "comma-separated towers tcp://host:T to beacon to (default: the embedded tower); with --curve-cert "
      "they must be zstoreds sharing our certificate")(
      "dafka-peers", po::value(&raw.dafka_peers),
      "comma-separated address ranges (10.0.0.0/8, 192.168.1.7, fd00::/8) the Dafka store may connect to; "
      "default any")("beacon-interval-ms", po::value(&o.beacon_interval_ms)->default_value(o.beacon_interval_ms),
                     "Dafka beacon interval")("beacon-timeout-ms",
                                              po::value(&o.beacon_timeout_ms)->default_value(o.beacon_timeout_ms),
                                              "drop Dafka peers silent for this long")(
      "dafka-fetch-retry-ms", po::value(&o.dafka_fetch_retry_ms)->default_value(o.dafka_fetch_retry_ms),
      "interval at which an unanswered FETCH for a Dafka gap is sent again")(
      "dafka-fetch-retries", po::value(&o.dafka_fetch_retries)->default_value(o.dafka_fetch_retries),
      "FETCHes for one Dafka gap before it is skipped (the head moves over it)")(
      "dafka-max-message-bytes", po::value(&o.dafka_max_message_bytes)->default_value(o.dafka_max_message_bytes),
      "largest Dafka record content, and any other frame, the store accepts (65536..67108864); a larger frame "
      "ends the publisher's connection (connected again at once) and its record is not stored")(
      "dafka-max-topics", po::value(&o.dafka_max_topics)->default_value(o.dafka_max_topics),
      "Dafka topics the store holds at most: a record of a new topic past it is refused (not stored, counted, "
      "logged once per --dafka-limits-interval-ms); 0 = no limit")(
      "dafka-max-partitions", po::value(&o.dafka_max_partitions)->default_value(o.dafka_max_partitions),
      "Dafka partitions (topic, producer) the store holds at most, in all topics (about 900 bytes of memory "
      "each); records of a new one past it are refused; 0 = no limit")(
      "dafka-max-partitions-per-topic",
      po::value(&o.dafka_max_partitions_per_topic)->default_value(o.dafka_max_partitions_per_topic),
      "Dafka partitions one topic holds at most; records of a new one past it are refused; 0 = no limit")(
      "dafka-max-new-partitions", po::value(&o.dafka_max_new_partitions)->default_value(o.dafka_max_new_partitions),
      "new Dafka partitions the store takes per --dafka-limits-interval-ms, from all producers together (a "
      "record names its producer itself); records of others are refused until the next interval; 0 = no limit")(
      "dafka-limits-interval-ms", po::value(&o.dafka_limits_interval_ms)->default_value(o.dafka_limits_interval_ms),
      "interval of --dafka-max-new-partitions and of the log line about refused records")(
      "dafka-metrics-topics", po::value(&o.dafka_metrics_topics)->default_value(o.dafka_metrics_topics),
      "Dafka topics with their own series in /metrics (those holding the most bytes); the others are summed "
      "under topic=\"\"");
}

// Binary Star (CHP high availability) and the CHP history it hands over.
void describe_ha(po::options_description& d, ServerOptions& o) {
  d.add_options()("ha", po::value(&o.ha),
                  "CHP high availability role: primary or backup (needs the three --ha-* endpoints)")(
      "ha-bind", po::value(&o.ha_bind), "our Binary Star state publisher, e.g. tcp://127.0.0.1:5003")(
      "ha-peer", po::value(&o.ha_peer), "the peer's state publisher, e.g. tcp://127.0.0.1:5004")(
      "ha-peer-chp", po::value(&o.ha_peer_chp), "the peer's CHP base, e.g. tcp://127.0.0.1:5566")(
      "ha-heartbeat-ms", po::value(&o.ha_heartbeat_ms)->default_value(o.ha_heartbeat_ms),
      "Binary Star state interval; the peer is dead after two")(
      "chp-history", po::value(&o.chp_history)->default_value(o.chp_history),
      "CHP updates kept in the history (client resumes, HA hand-over of what the peer lacks); 0 keeps none")(
      "chp-history-ms", po::value(&o.chp_history_ms)->default_value(o.chp_history_ms),
      "also drop history entries older than this (ms; so deleted values leave the disk in bounded time); 0 = no age "
      "bound")(
      "chp-key-history", po::bool_switch(&o.chp_key_history),
      "keep each CHP update with its value in chp_versions, for per-key history (HISTORY?, zstore-cli chp "
      "history), trimmed with --chp-history; it writes every value twice (measured on a loaded shared machine: about "
      "half the updates/s). "
      "Off, the versions kept are dropped at start; on again, they start from the last sequence. Both members of "
      "an HA pair, and replicas, should run the same setting")(
      "ha-test-cut-file", po::value(&o.ha_test_cut_file),
      "testing only: the HA state link drops every message while this file exists (a partition)")(
      "test-power-cut", po::bool_switch(&o.test_power_cut),
      "testing only: file writes reach the disk only when synced, so a SIGKILL also loses what a power cut "
      "would (storage/faults/power_cut_fs.h)");
}

// A read replica (docs/replicas.md).
void describe_replica(po::options_description& d, ServerOptions& o, RawFlags& raw) {
  d.add_options()(
      "replica-of", po::value(&raw.replica_of),
      "serve a read-only copy of this CHP map: comma-separated upstream CHP bases tcp://host:P (a pair's two "
      "members, or another replica); KVSETs and WRITE? are forwarded there")(
      "replica-silence-ms", po::value(&o.replica_silence_ms)->default_value(o.replica_silence_ms),
      "a replica tries its next upstream after this long without a KVPUB or HUGZ")(
      "replica-stale-ms", po::value(&o.replica_stale_ms)->default_value(o.replica_stale_ms),
      "a replica that has not heard its upstream for this long says so in /healthz and KTHXBAI (stale-ms)")(
      "replica-server-key", po::value(&o.replica_server_key),
      "the upstream's public certificate (its NAME.key): the replica follows and forwards over CURVE, "
      "authenticating with its own --curve-cert (which the upstream's --curve-allow must hold, and its --acl "
      "grant r, and w where the replica's clients may write); without it the upstream link is plain")(
      "replica-subtree", po::value(&o.replica_subtree),
      "a replica of this subtree only (a key prefix, e.g. /site-a/): it stores and serves that prefix and "
      "answers no snapshot request for a wider one; its data dir must not have held another subtree");
}

}  // namespace

po::options_description describe(ServerOptions& o, RawFlags& raw) {
  po::options_description d("zstored options (also ZSTORE_<FLAG> env vars and --config INI keys)");
  d.add_options()("help,h", "print this help and exit")("config", po::value(&raw.config),
                                                        "INI file with any of these flags as key=value")(
      "data-dir", po::value(&o.data_dir)->default_value(o.data_dir), "RocksDB data directory")(
      "bind", po::value(&o.bind)->default_value(o.bind), "address to bind every port on (e.g. 127.0.0.1, 0.0.0.0)")(
      "chp-port", po::value(&raw.chp_port)->default_value(raw.chp_port),
      "CHP base port P: snapshot ROUTER P, publisher P+1, collector P+2; 0 disables CHP")(
      "sync", po::value(&raw.sync)->default_value(raw.sync),
      "WAL fsync policy: always (fsync before anything is published, ACKed or handed over; one fsync per "
      "reactor turn for all of its updates: survives power loss), batch (fsync every --sync-interval-ms: a "
      "power loss may lose that much), none (survives a process crash only)")(
      "sync-interval-ms", po::value(&o.sync_interval_ms)->default_value(o.sync_interval_ms),
      "fsync interval of --sync batch")("max-value-bytes",
                                        po::value(&o.max_value_bytes)->default_value(o.max_value_bytes),
                                        "largest CHP value accepted (bytes)")(
      "hugz-interval-ms", po::value(&o.hugz_interval_ms)->default_value(o.hugz_interval_ms),
      "interval of the CHP HUGZ heartbeat (sent even while updates flow)")(
      "max-batch-bytes", po::value(&o.max_batch_bytes)->default_value(o.max_batch_bytes),
      "bytes of CHP updates or Dafka messages read per loop turn into one write batch (at least one message)")(
      "receive-buffer-bytes", po::value(&o.receive_buffer_bytes)->default_value(o.receive_buffer_bytes),
      "bytes one connection's receive queue may hold (CHP collector and HA follower, Dafka store); with "
      "--max-value-bytes and --dafka-max-message-bytes it sets the queues' high-water marks, see docs/operations.md")(
      "max-connections", po::value(&o.max_connections)->default_value(o.max_connections),
      "TCP connections accepted at once across the ZeroMQ ports (CHP, Dafka store, tower); more are closed as they "
      "arrive and counted. 0 = the file descriptor limit less the fds kept for RocksDB and the process "
      "(docs/operations.md); a value that does not fit in the limit stops zstored at start")(
      "max-connections-per-port", po::value(&o.max_connections_per_port)->default_value(o.max_connections_per_port),
      "TCP connections accepted at once on one ZeroMQ port; 0 = only --max-connections")(
      "subscriber-buffer-bytes", po::value(&o.subscriber_buffer_bytes)->default_value(o.subscriber_buffer_bytes),
      "bytes a CHP subscriber (or Dafka store subscriber) may fall behind what is published to it before it is "
      "disconnected and counted; it holds at most this plus its TCP send buffer and one message; 0 = no byte bound "
      "(the 100,000-message queue only)")(
      "snapshot-stall-ms", po::value(&o.snapshot_stall_ms)->default_value(o.snapshot_stall_ms),
      "a CHP snapshot whose client reads nothing for this long is dropped and its RocksDB snapshot released; 0 = "
      "never")("log-level", po::value(&o.log_level)->default_value(o.log_level), "trace, debug, info, warn, error")(
      "min-free-bytes", po::value(&o.min_free_bytes)->default_value(o.min_free_bytes),
      "free bytes below which, on the data dir's file system, CHP updates and Dafka records are refused "
      "(checked every second); 0 disables")(
      "memtable-budget-bytes", po::value(&o.memtable_budget_bytes)->default_value(o.memtable_budget_bytes),
      "RocksDB memtables of all column families together: writes wait (nothing is lost) while they hold it, until "
      "a flush frees some, so they never hold more than it plus one write batch; at least 8 MiB and 2 x "
      "--max-batch-bytes (docs/operations.md, Sizing and memory)")(
      "block-cache-bytes", po::value(&o.block_cache_bytes)->default_value(o.block_cache_bytes),
      "RocksDB block cache shared by all column families, index and filter blocks included; at least 4 MiB")(
      "shared-core", po::bool_switch(&o.shared_core),
      "for a server confined to fewer cores than it has threads (e.g. pinned to one CPU): ZeroMQ's I/O threads "
      "SCHED_BATCH while a reactor streams or lags, RocksDB's flush and compaction threads reniced, and their "
      "writes paced; off by default");
  describe_dafka(d, o, raw);
  describe_ha(d, o);
  describe_replica(d, o, raw);
  describe_retention(d, o);
  return d;
}

// The Dafka store's, the tower's and the HTTP port's flags.
void describe_security(po::options_description& d, ServerOptions& o) {
  d.add_options()(
      "curve-cert", po::value(&o.curve_cert),
      "CURVE: our secret certificate (zstore-cli keygen NAME writes NAME.key_secret); encrypts and "
      "authenticates every ZeroMQ port (CHP, HA, the Dafka store, its peer connections and the tower; Dafka "
      "nodes announce their keys in beacons); needs --curve-allow")(
      "curve-allow", po::value(&o.curve_allow),
      "CURVE: directory of the public certificates (NAME.key) of the clients allowed in; re-read on SIGHUP")(
      "insecure", po::bool_switch(&o.insecure),
      "allow binding beyond loopback without --curve-cert (ZeroMQ) or --http-token-file (HTTP)")(
      "http-token-file", po::value(&o.http_token_file),
      "file holding a token: GET /metrics and /admin/* need 'Authorization: Bearer TOKEN' (401 otherwise)")(
      "acl", po::value(&o.acl),
      "CHP access rules, one 'NAME r|w|rw PREFIX' per line (NAME: a --curve-allow client); needs --curve-cert; "
      "re-read on SIGHUP (a bad file keeps the rules in force)")(
      "backup-dir", po::value(&o.backup_dir),
      "directory POST /admin/checkpoint writes under (dir=NAME: a new subdirectory); without it, checkpoints are off");
}

}  // namespace zstore::server
