#include "server/zstored/zstored_config.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <stdexcept>

#include "protocol/endpoint.h"
#include "security/curve_cert.h"
#include "server/http/http_auth.h"

namespace zstore::server {

std::shared_ptr<ChpAclFile> open_acl(const ServerOptions& o) {
  if (o.acl.empty()) return nullptr;
  std::string error;
  std::shared_ptr<ChpAclFile> acl = ChpAclFile::open(o.acl, &error);
  if (!acl) throw std::runtime_error("--acl: " + error);
  spdlog::info("CHP access rules: {} rule(s) from {}", acl->current()->rules(), o.acl);
  return acl;
}

ChpServerConfig chp_config(const ServerOptions& o, const security::SocketSecurity& security,
                           std::shared_ptr<ChpAclFile> acl) {
  ChpServerConfig c;
  c.security = security;
  c.acl = std::move(acl);
  c.bind = o.bind;
  c.port = o.chp_port;
  c.limits.max_value_bytes = o.max_value_bytes;
  c.hugz_interval = std::chrono::milliseconds(o.hugz_interval_ms);
  c.snapshot_stall = std::chrono::milliseconds(o.snapshot_stall_ms);
  c.history_max_age = std::chrono::milliseconds(o.chp_history_ms);
  c.max_batch_bytes = o.max_batch_bytes;
  c.receive_budget_bytes = o.receive_buffer_bytes;
  c.subscriber_buffer_bytes = o.subscriber_buffer_bytes;
  if (!o.ha.empty()) {
    c.ha = HaConfig{o.ha == "primary" ? HaState::kPrimary : HaState::kBackup,
                    o.ha_bind,
                    o.ha_peer,
                    o.ha_peer_chp,
                    std::chrono::milliseconds(o.ha_heartbeat_ms),
                    o.ha_test_cut_file};
  }
  if (!o.replica_of.empty()) {
    c.replica = ReplicaConfig{o.replica_of,
                              std::chrono::milliseconds(o.replica_silence_ms),
                              std::chrono::milliseconds(o.replica_stale_ms),
                              o.replica_subtree,
                              {}};
    if (!o.replica_server_key.empty()) {
      auto upstream = security::load_cert(o.replica_server_key, false);
      if (!upstream.cert) throw std::runtime_error("--replica-server-key: " + upstream.error);
      c.replica->upstream_security = {security.cert, upstream.cert->public_key};
    }
  }
  return c;
}

DafkaStoreConfig dafka_config(const ServerOptions& o, const security::SocketSecurity& security, const ZapHandler* zap) {
  DafkaStoreConfig c;
  c.security = security;
  if (zap) c.peer_name = [zap](const std::string& key) { return zap->name_of_key(key); };
  c.bind = o.bind;
  c.port = o.dafka_port;
  c.advertise = o.advertise;
  c.towers = o.towers;
  if (c.towers.empty() && o.tower_port != 0) {
    // Our own embedded tower; a wildcard bind is reached on loopback.
    bool wildcard = o.bind == "*" || o.bind == "0.0.0.0";
    c.towers.push_back(protocol::tcp_endpoint(wildcard ? "127.0.0.1" : o.bind, o.tower_port));
  }
  c.beacon_interval = std::chrono::milliseconds(o.beacon_interval_ms);
  c.beacon_timeout = std::chrono::milliseconds(o.beacon_timeout_ms);
  c.fetch_retry = std::chrono::milliseconds(o.dafka_fetch_retry_ms);
  c.max_fetch_retries = static_cast<int>(o.dafka_fetch_retries);
  c.max_batch_bytes = o.max_batch_bytes;
  c.peers = o.dafka_peers;
  c.limits.max_content_bytes = o.dafka_max_message_bytes;
  c.limits.max_frame_bytes = o.dafka_max_message_bytes;
  c.receive_budget_bytes = o.receive_buffer_bytes;
  c.partition_limits = {o.dafka_max_topics, o.dafka_max_partitions, o.dafka_max_partitions_per_topic,
                        o.dafka_max_new_partitions, std::chrono::milliseconds(o.dafka_limits_interval_ms)};
  return c;
}

HttpConfig http_config(const ServerOptions& o) {
  HttpConfig c;
  c.bind = o.bind;
  c.port = o.http_port;
  c.max_connections = o.http_max_connections;
  if (!o.http_token_file.empty()) {
    if (auto err = load_token(o.http_token_file, &c.token); !err.empty()) throw std::runtime_error(err);
  } else if (!is_loopback(o.bind)) {
    spdlog::warn("HTTP /metrics and /admin are open to anyone reaching {}:{} (--insecure without --http-token-file)",
                 o.bind, o.http_port);
  }
  if (!o.backup_dir.empty()) {
    std::error_code ec;
    auto dir = std::filesystem::absolute(o.backup_dir, ec);
    if (ec || !std::filesystem::is_directory(dir, ec)) {
      throw std::runtime_error("--backup-dir " + o.backup_dir + " is not a directory");
    }
    c.backup_dir = dir.lexically_normal().string();
  }
  return c;
}

}  // namespace zstore::server
