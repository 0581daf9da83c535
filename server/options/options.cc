#include "server/options/options.h"

#include <boost/program_options.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "protocol/endpoint.h"

namespace zstore::server {
namespace po = boost::program_options;
namespace {

struct Raw {
  std::string config;
  std::string sync = "always";
  std::string towers;
  std::string dafka_peers;
  std::string replica_of;
  unsigned chp_port = 5556, dafka_port = 5582, tower_port = 5580, http_port = 0;
};

void describe_retention(po::options_description& d, ServerOptions& o) {
  auto& r = o.dafka_retention.defaults;
  d.add_options()
      ("dafka-retain-ms", po::value(&r.ms)->default_value(r.ms),
       "Dafka records older than this are deleted (per partition); 0 = no age limit")
      ("dafka-retain-bytes", po::value(&r.bytes)->default_value(r.bytes),
       "Dafka content bytes kept per partition, the oldest records deleted first; 0 = no limit")
      ("dafka-retain-records", po::value(&r.records)->default_value(r.records),
       "Dafka records kept per partition, the oldest deleted first; 0 = no limit")
      ("dafka-retention-interval-ms",
       po::value(&o.dafka_retention_interval_ms)->default_value(o.dafka_retention_interval_ms),
       "interval of the Dafka retention passes (a background thread)");
}

void describe_dafka(po::options_description& d, ServerOptions& o, Raw& raw);
void describe_ha(po::options_description& d, ServerOptions& o);
void describe_replica(po::options_description& d, ServerOptions& o, Raw& raw);

po::options_description describe(ServerOptions& o, Raw& raw) {
  po::options_description d("zstored options (also ZSTORE_<FLAG> env vars and --config INI keys)");
  d.add_options()
      ("help,h", "print this help and exit")
      ("config", po::value(&raw.config), "INI file with any of these flags as key=value")
      ("data-dir", po::value(&o.data_dir)->default_value(o.data_dir), "RocksDB data directory")
      ("bind", po::value(&o.bind)->default_value(o.bind), "address to bind every port on (e.g. 127.0.0.1, 0.0.0.0)")
      ("chp-port", po::value(&raw.chp_port)->default_value(raw.chp_port),
       "CHP base port P: snapshot ROUTER P, publisher P+1, collector P+2; 0 disables CHP")
      ("sync", po::value(&raw.sync)->default_value(raw.sync),
       "WAL fsync policy: always (fsync before anything is published, ACKed or handed over; one fsync per "
       "reactor turn for all of its updates: survives power loss), batch (fsync every --sync-interval-ms: a "
       "power loss may lose that much), none (survives a process crash only)")
      ("sync-interval-ms", po::value(&o.sync_interval_ms)->default_value(o.sync_interval_ms),
       "fsync interval of --sync batch")
      ("max-value-bytes", po::value(&o.max_value_bytes)->default_value(o.max_value_bytes),
       "largest CHP value accepted (bytes)")
      ("hugz-interval-ms", po::value(&o.hugz_interval_ms)->default_value(o.hugz_interval_ms),
       "interval of the CHP HUGZ heartbeat (sent even while updates flow)")
      ("max-batch-bytes", po::value(&o.max_batch_bytes)->default_value(o.max_batch_bytes),
       "bytes of CHP updates or Dafka messages read per loop turn into one write batch (at least one message)")
      ("receive-buffer-bytes", po::value(&o.receive_buffer_bytes)->default_value(o.receive_buffer_bytes),
       "bytes one connection's receive queue may hold (CHP collector and HA follower, Dafka store); with "
       "--max-value-bytes and --dafka-max-message-bytes it sets the queues' high-water marks, see docs/operations.md")
      ("max-connections", po::value(&o.max_connections)->default_value(o.max_connections),
       "TCP connections accepted at once across the ZeroMQ ports (CHP, Dafka store, tower); more are closed as they "
       "arrive and counted. 0 = the file descriptor limit less the fds kept for RocksDB and the process "
       "(docs/operations.md); a value that does not fit in the limit stops zstored at start")
      ("max-connections-per-port",
       po::value(&o.max_connections_per_port)->default_value(o.max_connections_per_port),
       "TCP connections accepted at once on one ZeroMQ port; 0 = only --max-connections")
      ("subscriber-buffer-bytes", po::value(&o.subscriber_buffer_bytes)->default_value(o.subscriber_buffer_bytes),
       "bytes a CHP subscriber (or Dafka store subscriber) may fall behind what is published to it before it is "
       "disconnected and counted; it holds at most this plus its TCP send buffer and one message; 0 = no byte bound "
       "(the 100,000-message queue only)")
      ("snapshot-stall-ms", po::value(&o.snapshot_stall_ms)->default_value(o.snapshot_stall_ms),
       "a CHP snapshot whose client reads nothing for this long is dropped and its RocksDB snapshot released; 0 = never")
      ("log-level", po::value(&o.log_level)->default_value(o.log_level), "trace, debug, info, warn, error")
      ("min-free-bytes", po::value(&o.min_free_bytes)->default_value(o.min_free_bytes),
       "free bytes below which, on the data dir's file system, CHP updates and Dafka records are refused "
       "(checked every second); 0 disables")
      ("memtable-budget-bytes", po::value(&o.memtable_budget_bytes)->default_value(o.memtable_budget_bytes),
       "RocksDB memtables of all column families together: writes wait (nothing is lost) while they hold it, until "
       "a flush frees some, so they never hold more than it plus one write batch; at least 8 MiB and 2 x "
       "--max-batch-bytes (docs/operations.md, Sizing and memory)")
      ("block-cache-bytes", po::value(&o.block_cache_bytes)->default_value(o.block_cache_bytes),
       "RocksDB block cache shared by all column families, index and filter blocks included; at least 4 MiB")
      ("shared-core", po::bool_switch(&o.shared_core),
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
void describe_dafka(po::options_description& d, ServerOptions& o, Raw& raw) {
  d.add_options()
      ("dafka-port", po::value(&raw.dafka_port)->default_value(raw.dafka_port),
       "Dafka store publisher (XPUB) port; 0 disables the store. With --curve-cert it connects only to "
       "publishers announcing a key in --curve-allow")
      ("tower-port", po::value(&raw.tower_port)->default_value(raw.tower_port),
       "embedded Dafka tower: XSUB at T, XPUB at T+1; 0 disables it. With --curve-cert only allowed keys "
       "beacon or hear beacons")
      ("http-port", po::value(&raw.http_port)->default_value(raw.http_port),
       "HTTP port for GET /healthz, GET /metrics and POST /admin/checkpoint (bound on --bind); 0 disables it")
      ("http-max-connections", po::value(&o.http_max_connections)->default_value(o.http_max_connections),
       "HTTP connections open at once at most (1..65536); past it a new one evicts the oldest that has not "
       "sent its whole request yet")
      ("advertise", po::value(&o.advertise)->default_value(o.advertise),
       "host other Dafka nodes use to reach this store")
      ("towers", po::value(&raw.towers),
       "comma-separated towers tcp://host:T to beacon to (default: the embedded tower); with --curve-cert "
       "they must be zstoreds sharing our certificate")
      ("dafka-peers", po::value(&raw.dafka_peers),
       "comma-separated address ranges (10.0.0.0/8, 192.168.1.7, fd00::/8) the Dafka store may connect to; "
       "default any")
      ("beacon-interval-ms", po::value(&o.beacon_interval_ms)->default_value(o.beacon_interval_ms),
       "Dafka beacon interval")
      ("beacon-timeout-ms", po::value(&o.beacon_timeout_ms)->default_value(o.beacon_timeout_ms),
       "drop Dafka peers silent for this long")
      ("dafka-fetch-retry-ms", po::value(&o.dafka_fetch_retry_ms)->default_value(o.dafka_fetch_retry_ms),
       "interval at which an unanswered FETCH for a Dafka gap is sent again")
      ("dafka-fetch-retries", po::value(&o.dafka_fetch_retries)->default_value(o.dafka_fetch_retries),
       "FETCHes for one Dafka gap before it is skipped (the head moves over it)")
      ("dafka-max-message-bytes", po::value(&o.dafka_max_message_bytes)->default_value(o.dafka_max_message_bytes),
       "largest Dafka record content, and any other frame, the store accepts (65536..67108864); a larger frame "
       "ends the publisher's connection (connected again at once) and its record is not stored")
      ("dafka-max-topics", po::value(&o.dafka_max_topics)->default_value(o.dafka_max_topics),
       "Dafka topics the store holds at most: a record of a new topic past it is refused (not stored, counted, "
       "logged once per --dafka-limits-interval-ms); 0 = no limit")
      ("dafka-max-partitions", po::value(&o.dafka_max_partitions)->default_value(o.dafka_max_partitions),
       "Dafka partitions (topic, producer) the store holds at most, in all topics (about 900 bytes of memory "
       "each); records of a new one past it are refused; 0 = no limit")
      ("dafka-max-partitions-per-topic",
       po::value(&o.dafka_max_partitions_per_topic)->default_value(o.dafka_max_partitions_per_topic),
       "Dafka partitions one topic holds at most; records of a new one past it are refused; 0 = no limit")
      ("dafka-max-new-partitions", po::value(&o.dafka_max_new_partitions)->default_value(o.dafka_max_new_partitions),
       "new Dafka partitions the store takes per --dafka-limits-interval-ms, from all producers together (a "
       "record names its producer itself); records of others are refused until the next interval; 0 = no limit")
      ("dafka-limits-interval-ms", po::value(&o.dafka_limits_interval_ms)->default_value(o.dafka_limits_interval_ms),
       "interval of --dafka-max-new-partitions and of the log line about refused records")
      ("dafka-metrics-topics", po::value(&o.dafka_metrics_topics)->default_value(o.dafka_metrics_topics),
       "Dafka topics with their own series in /metrics (those holding the most bytes); the others are summed "
       "under topic=\"\"");
}

// Binary Star (CHP high availability) and the CHP history it hands over.
void describe_ha(po::options_description& d, ServerOptions& o) {
  d.add_options()
      ("ha", po::value(&o.ha), "CHP high availability role: primary or backup (needs the three --ha-* endpoints)")
      ("ha-bind", po::value(&o.ha_bind), "our Binary Star state publisher, e.g. tcp://127.0.0.1:5003")
      ("ha-peer", po::value(&o.ha_peer), "the peer's state publisher, e.g. tcp://127.0.0.1:5004")
      ("ha-peer-chp", po::value(&o.ha_peer_chp), "the peer's CHP base, e.g. tcp://127.0.0.1:5566")
      ("ha-heartbeat-ms", po::value(&o.ha_heartbeat_ms)->default_value(o.ha_heartbeat_ms),
       "Binary Star state interval; the peer is dead after two")
      ("chp-history", po::value(&o.chp_history)->default_value(o.chp_history),
       "CHP updates kept in the history (client resumes, HA hand-over of what the peer lacks); 0 keeps none")
      ("chp-history-ms", po::value(&o.chp_history_ms)->default_value(o.chp_history_ms),
       "also drop history entries older than this (ms; so deleted values leave the disk in bounded time); 0 = no age bound")
      ("chp-key-history", po::bool_switch(&o.chp_key_history),
       "keep each CHP update with its value in chp_versions, for per-key history (HISTORY?, zstore-cli chp "
       "history), trimmed with --chp-history; it writes every value twice (measured on a loaded shared machine: about half the updates/s). "
       "Off, the versions kept are dropped at start; on again, they start from the last sequence. Both members of "
       "an HA pair, and replicas, should run the same setting")
      ("ha-test-cut-file", po::value(&o.ha_test_cut_file),
       "testing only: the HA state link drops every message while this file exists (a partition)")
      ("test-power-cut", po::bool_switch(&o.test_power_cut),
       "testing only: file writes reach the disk only when synced, so a SIGKILL also loses what a power cut "
       "would (storage/faults/power_cut_fs.h)");
}

// A read replica (docs/replicas.md).
void describe_replica(po::options_description& d, ServerOptions& o, Raw& raw) {
  d.add_options()
      ("replica-of", po::value(&raw.replica_of),
       "serve a read-only copy of this CHP map: comma-separated upstream CHP bases tcp://host:P (a pair's two "
       "members, or another replica); KVSETs and WRITE? are forwarded there")
      ("replica-silence-ms", po::value(&o.replica_silence_ms)->default_value(o.replica_silence_ms),
       "a replica tries its next upstream after this long without a KVPUB or HUGZ")
      ("replica-stale-ms", po::value(&o.replica_stale_ms)->default_value(o.replica_stale_ms),
       "a replica that has not heard its upstream for this long says so in /healthz and KTHXBAI (stale-ms)")
      ("replica-server-key", po::value(&o.replica_server_key),
       "the upstream's public certificate (its NAME.key): the replica follows and forwards over CURVE, "
       "authenticating with its own --curve-cert (which the upstream's --curve-allow must hold, and its --acl "
       "grant r, and w where the replica's clients may write); without it the upstream link is plain")
      ("replica-subtree", po::value(&o.replica_subtree),
       "a replica of this subtree only (a key prefix, e.g. /site-a/): it stores and serves that prefix and "
       "answers no snapshot request for a wider one; its data dir must not have held another subtree");
}

void describe_security(po::options_description& d, ServerOptions& o) {
  d.add_options()
      ("curve-cert", po::value(&o.curve_cert),
       "CURVE: our secret certificate (zstore-cli keygen NAME writes NAME.key_secret); encrypts and "
       "authenticates every ZeroMQ port (CHP, HA, the Dafka store, its peer connections and the tower; Dafka "
       "nodes announce their keys in beacons); needs --curve-allow")
      ("curve-allow", po::value(&o.curve_allow),
       "CURVE: directory of the public certificates (NAME.key) of the clients allowed in; re-read on SIGHUP")
      ("insecure", po::bool_switch(&o.insecure),
       "allow binding beyond loopback without --curve-cert (ZeroMQ) or --http-token-file (HTTP)")
      ("http-token-file", po::value(&o.http_token_file),
       "file holding a token: GET /metrics and /admin/* need 'Authorization: Bearer TOKEN' (401 otherwise)")
      ("acl", po::value(&o.acl),
       "CHP access rules, one 'NAME r|w|rw PREFIX' per line (NAME: a --curve-allow client); needs --curve-cert; "
       "re-read on SIGHUP (a bad file keeps the rules in force)")
      ("backup-dir", po::value(&o.backup_dir),
       "directory POST /admin/checkpoint writes under (dir=NAME: a new subdirectory); without it, checkpoints are off");
}

// Protected mode, like Redis's: nothing beyond loopback is served without
// authentication unless --insecure says so.
std::optional<std::string> check_exposure(const ServerOptions& o) {
  if (o.insecure) return std::nullopt;
  bool zmq_ports = o.chp_port != 0 || o.dafka_port != 0 || o.tower_port != 0;
  auto ha_host = protocol::parse_tcp_endpoint(o.ha_bind);
  bool zmq_exposed = (zmq_ports && !is_loopback(o.bind)) || (ha_host && !is_loopback(ha_host->host));
  if (zmq_exposed && o.curve_cert.empty()) {
    return "refusing to serve ZeroMQ ports beyond loopback (--bind " + o.bind + (o.ha_bind.empty() ? "" : ", --ha-bind " + o.ha_bind) +
           ") without CURVE: anyone reaching them could read and write everything. Make keys: "
           "'zstore-cli keygen server --dir keys' and, per client, 'zstore-cli keygen NAME' with NAME.key copied into "
           "an allow directory; then give --curve-cert keys/server.key_secret --curve-allow DIR. Or accept the risk "
           "with --insecure";
  }
  if (o.http_port != 0 && !is_loopback(o.bind) && o.http_token_file.empty()) {
    return "refusing to serve HTTP (/metrics, /admin) beyond loopback (--bind " + o.bind +
           ") without a token: put a secret in a file (e.g. 'head -c 32 /dev/urandom | base64 > token') and give "
           "--http-token-file FILE, or accept the risk with --insecure";
  }
  return std::nullopt;
}

std::optional<std::string> check_security(const ServerOptions& o) {
  if (o.curve_cert.empty() != o.curve_allow.empty()) {
    return std::string("--curve-cert and --curve-allow go together (make keys with 'zstore-cli keygen NAME')");
  }
  if (!o.acl.empty() && o.curve_cert.empty()) {
    return std::string("--acl needs --curve-cert and --curve-allow: clients are named by their keys");
  }
  return std::nullopt;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// The flag named by environment variable `name` (ZSTORE_DATA_DIR ->
// data-dir), or empty when it names none of ours.
std::string env_flag(const po::options_description& d, const std::string& name) {
  std::string flag;
  if (name.rfind("ZSTORE_", 0) != 0) return flag;
  for (char c : name.substr(7)) flag.push_back(c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (flag == "help" || d.find_nothrow(flag, false) == nullptr) flag.clear();
  return flag;
}

// "[dafka-topic PREFIX]" sections of the config file: options named
// "dafka-topic PREFIX.dafka-retain-ms" (or -bytes, -records) override the
// defaults for topics starting with PREFIX. Anything else unknown is an error.
constexpr std::string_view kTopicSection = "dafka-topic ";

std::optional<std::string> topic_override(ServerOptions& o, const po::option& opt) {
  const std::string& name = opt.string_key;
  auto dot = name.rfind('.');
  if (name.rfind(kTopicSection, 0) != 0 || dot == std::string::npos || dot <= kTopicSection.size() ||
      opt.value.size() != 1) {
    return "--config: unknown option '" + name + "'";
  }
  std::string prefix = name.substr(kTopicSection.size(), dot - kTopicSection.size());
  std::string key = name.substr(dot + 1);
  std::uint64_t value = 0;
  try {
    std::size_t used = 0;
    value = std::stoull(opt.value[0], &used);
    if (used != opt.value[0].size() || opt.value[0][0] == '-') throw std::invalid_argument("");
  } catch (const std::exception&) {
    return "--config: [dafka-topic " + prefix + "] " + key + ": not a number: '" + opt.value[0] + "'";
  }
  auto it = std::find_if(o.dafka_retention.overrides.begin(), o.dafka_retention.overrides.end(),
                         [&](const auto& e) { return e.first == prefix; });
  if (it == o.dafka_retention.overrides.end()) {
    o.dafka_retention.overrides.emplace_back(prefix, o.dafka_retention.defaults);
    it = std::prev(o.dafka_retention.overrides.end());
  }
  if (key == "dafka-retain-ms") {
    it->second.ms = value;
  } else if (key == "dafka-retain-bytes") {
    it->second.bytes = value;
  } else if (key == "dafka-retain-records") {
    it->second.records = value;
  } else {
    return "--config: [dafka-topic " + prefix + "]: unknown key '" + key + "'";
  }
  return std::nullopt;
}

std::optional<std::string> check_port(const char* flag, unsigned value, unsigned span) {
  if (value + span - 1 > 65535) return std::string("--") + flag + ": port " + std::to_string(value) + " out of range";
  return std::nullopt;
}

// True for tcp://HOST:PORT with a non-empty host and a port in 1..65535.
bool is_tcp_endpoint(const std::string& ep) { return protocol::parse_tcp_endpoint(ep).has_value(); }

std::optional<std::string> check_ha(const ServerOptions& o) {
  if (o.ha.empty()) {
    if (!o.ha_bind.empty() || !o.ha_peer.empty() || !o.ha_peer_chp.empty()) {
      return std::string("--ha-bind/--ha-peer/--ha-peer-chp need --ha primary|backup");
    }
    return std::nullopt;
  }
  if (o.ha != "primary" && o.ha != "backup") return "--ha: expected primary or backup, got '" + o.ha + "'";
  if (o.chp_port == 0) return std::string("--ha needs CHP (--chp-port is 0)");
  const std::pair<const char*, const std::string*> eps[] = {
      {"--ha-bind", &o.ha_bind}, {"--ha-peer", &o.ha_peer}, {"--ha-peer-chp", &o.ha_peer_chp}};
  for (const auto& [flag, value] : eps) {
    if (!is_tcp_endpoint(*value)) return std::string(flag) + ": expected tcp://host:port, got '" + *value + "'";
  }
  if (!protocol::tcp_endpoint_at_offset(o.ha_peer_chp, 2)) {
    return "--ha-peer-chp: the peer's CHP ports P..P+2 need P <= 65533, got '" + o.ha_peer_chp + "'";
  }
  if (o.ha_heartbeat_ms == 0) return std::string("--ha-heartbeat-ms must be positive");
  return std::nullopt;
}

std::optional<std::string> check_replica(const ServerOptions& o) {
  if (o.replica_of.empty()) {
    if (!o.replica_subtree.empty()) return std::string("--replica-subtree needs --replica-of");
    if (!o.replica_server_key.empty()) return std::string("--replica-server-key needs --replica-of");
    return std::nullopt;
  }
  if (!o.ha.empty()) return std::string("--replica-of cannot be combined with --ha (a replica follows a pair)");
  if (o.chp_port == 0) return std::string("--replica-of needs CHP (--chp-port is 0)");
  if (!o.replica_server_key.empty() && o.curve_cert.empty()) {
    return std::string("--replica-server-key needs --curve-cert: the replica authenticates upstream with its own key");
  }
  if (o.replica_of.size() > 2) return std::string("--replica-of: at most two upstreams (a pair)");
  for (const auto& u : o.replica_of) {
    if (!protocol::tcp_endpoint_at_offset(u, 2)) {
      return "--replica-of: '" + u + "' is not a tcp://host:P address with P <= 65533 (CHP uses P..P+2)";
    }
  }
  if (o.replica_silence_ms == 0) return std::string("--replica-silence-ms must be positive");
  if (o.replica_subtree.size() > 1024) return std::string("--replica-subtree: longer than 1024 bytes");
  if (o.replica_stale_ms == 0) return std::string("--replica-stale-ms must be positive");
  return std::nullopt;
}

// A budget of two batches at least: the chp_map flush asked for at half the
// budget (storage/db/memory_budget.h) must come before one batch fills the rest.
std::optional<std::string> check_memory(const ServerOptions& o) {
  if (o.memtable_budget_bytes < storage::kMinMemtableBudgetBytes || o.memtable_budget_bytes / 2 < o.max_batch_bytes) {
    return "--memtable-budget-bytes must be at least " + std::to_string(storage::kMinMemtableBudgetBytes) +
           " and 2 x --max-batch-bytes (" + std::to_string(o.max_batch_bytes) + "), got " +
           std::to_string(o.memtable_budget_bytes);
  }
  if (o.block_cache_bytes < storage::kMinBlockCacheBytes) {
    return "--block-cache-bytes must be at least " + std::to_string(storage::kMinBlockCacheBytes) + ", got " +
           std::to_string(o.block_cache_bytes);
  }
  return std::nullopt;
}

std::optional<std::string> finish(ServerOptions& o, const Raw& raw) {
  auto sync = storage::parse_sync_policy(raw.sync);
  if (!sync) return "--sync: expected none, batch or always, got '" + raw.sync + "'";
  o.sync = *sync;
  if (auto e = check_port("chp-port", raw.chp_port, 3)) return e;
  if (auto e = check_port("dafka-port", raw.dafka_port, 1)) return e;
  if (auto e = check_port("tower-port", raw.tower_port, 2)) return e;
  if (auto e = check_port("http-port", raw.http_port, 1)) return e;
  o.chp_port = static_cast<std::uint16_t>(raw.chp_port);
  o.dafka_port = static_cast<std::uint16_t>(raw.dafka_port);
  o.tower_port = static_cast<std::uint16_t>(raw.tower_port);
  o.http_port = static_cast<std::uint16_t>(raw.http_port);
  if (o.http_max_connections == 0 || o.http_max_connections > 65536) {
    return "--http-max-connections: expected 1..65536, got " + std::to_string(o.http_max_connections);
  }
  o.towers = split_list(raw.towers);
  for (const auto& t : o.towers) {
    if (!protocol::tcp_endpoint_at_offset(t, 1)) {
      return "--towers: '" + t +
             "' is not a tcp://host:port address with a port in 1..65534 (the tower uses P and P+1)";
    }
  }
  if (!raw.dafka_peers.empty()) {
    std::string error;
    auto ranges = protocol::parse_cidr_list(raw.dafka_peers, &error);
    if (!ranges) return "--dafka-peers: " + error;
    o.dafka_peers = std::move(*ranges);
  }
  if (o.data_dir.empty()) return std::string("--data-dir must not be empty");
  if (o.max_value_bytes == 0) return std::string("--max-value-bytes must be positive");
  if (o.max_batch_bytes == 0) return std::string("--max-batch-bytes must be positive");
  if (o.receive_buffer_bytes == 0) return std::string("--receive-buffer-bytes must be positive");
  if (auto e = check_memory(o)) return e;
  if (o.sync_interval_ms == 0) return std::string("--sync-interval-ms must be positive");
  if (o.hugz_interval_ms == 0) return std::string("--hugz-interval-ms must be positive");
  if (o.beacon_interval_ms == 0 || o.beacon_timeout_ms <= o.beacon_interval_ms) {
    return std::string("--beacon-timeout-ms must exceed a positive --beacon-interval-ms");
  }
  if (o.dafka_fetch_retry_ms == 0) return std::string("--dafka-fetch-retry-ms must be positive");
  if (o.dafka_retention_interval_ms == 0) return std::string("--dafka-retention-interval-ms must be positive");
  if (o.dafka_limits_interval_ms == 0) return std::string("--dafka-limits-interval-ms must be positive");
  if (o.dafka_fetch_retries == 0 || o.dafka_fetch_retries > 1000000) {
    return std::string("--dafka-fetch-retries must be 1..1000000");
  }
  if (o.dafka_max_message_bytes < (64u << 10) || o.dafka_max_message_bytes > (64u << 20)) {
    return std::string("--dafka-max-message-bytes must be 65536..67108864");
  }
  o.replica_of = split_list(raw.replica_of);
  if (!raw.replica_of.empty() && o.replica_of.empty()) return std::string("--replica-of: no upstream given");
  if (auto e = check_ha(o)) return e;
  if (auto e = check_replica(o)) return e;
  if (auto e = check_security(o)) return e;
  if (auto e = check_exposure(o)) return e;
  static const char* levels[] = {"trace", "debug", "info", "warn", "error"};
  if (std::find(std::begin(levels), std::end(levels), o.log_level) == std::end(levels)) {
    return "--log-level: expected trace, debug, info, warn or error, got '" + o.log_level + "'";
  }
  return std::nullopt;
}

}  // namespace

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

ParseOutcome parse_options(int argc, const char* const* argv, const char* const* env) {
  ServerOptions o;
  Raw raw;
  po::options_description d = describe(o, raw);
  describe_security(d, o);
  po::variables_map vm;
  std::vector<po::option> unrecognized;
  try {
    po::store(po::command_line_parser(argc, argv).options(d).run(), vm);
    for (const char* const* e = env; e != nullptr && *e != nullptr; ++e) {
      std::string kv(*e);
      auto eq = kv.find('=');
      if (eq == std::string::npos) continue;
      std::string flag = env_flag(d, kv.substr(0, eq));
      if (flag.empty() || (vm.count(flag) && !vm[flag].defaulted())) continue;
      po::store(po::command_line_parser(std::vector<std::string>{"--" + flag + "=" + kv.substr(eq + 1)})
                    .options(d)
                    .run(),
                vm);
    }
    if (vm.count("help")) {
      std::ostringstream out;
      out << "usage: zstored [options]\n\n" << d;
      return {std::nullopt, 0, out.str()};
    }
    if (vm.count("config")) {
      std::ifstream in(vm["config"].as<std::string>());
      if (!in) return {std::nullopt, 2, "--config: cannot read '" + vm["config"].as<std::string>() + "'"};
      auto parsed = po::parse_config_file(in, d, true);
      po::store(parsed, vm);
      unrecognized = parsed.options;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    return {std::nullopt, 2, std::string("zstored: ") + e.what() + " (see --help)"};
  }
  // Overrides start from the final defaults (flags, environment, file).
  for (const auto& opt : unrecognized) {
    if (!opt.unregistered) continue;
    if (auto e = topic_override(o, opt)) return {std::nullopt, 2, "zstored: " + *e};
  }
  if (auto e = finish(o, raw)) return {std::nullopt, 2, "zstored: " + *e};
  return {o, 0, ""};
}

}  // namespace zstore::server
