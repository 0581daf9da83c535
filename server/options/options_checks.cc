#include "server/options/options_checks.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "protocol/endpoint.h"

namespace zstore::server {
namespace {

// Protected mode, like Redis's: nothing beyond loopback is served without
// authentication unless --insecure says so.
std::optional<std::string> check_exposure(const ServerOptions& o) {
  if (o.insecure) return std::nullopt;
  bool zmq_ports = o.chp_port != 0 || o.dafka_port != 0 || o.tower_port != 0;
  auto ha_host = protocol::parse_tcp_endpoint(o.ha_bind);
  bool zmq_exposed = (zmq_ports && !is_loopback(o.bind)) || (ha_host && !is_loopback(ha_host->host));
  if (zmq_exposed && o.curve_cert.empty()) {
    return "refusing to serve ZeroMQ ports beyond loopback (--bind " + o.bind +
           (o.ha_bind.empty() ? "" : ", --ha-bind " + o.ha_bind) +
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

}  // namespace

std::optional<std::string> finish(ServerOptions& o, const RawFlags& raw) {
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

}  // namespace zstore::server
