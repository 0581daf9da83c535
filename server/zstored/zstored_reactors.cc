#include "server/zstored/zstored_reactors.h"

#include <spdlog/spdlog.h>

#include <stdexcept>

#include "security/curve_cert.h"
#include "server/zstored/zstored_config.h"

namespace zstore::server {

// With --curve-cert: our certificate for every socket, and the ZAP handler
// judging clients (started before any socket binds). False: cannot start.
bool Reactors::start_security(const ServerOptions& o) {
  if (o.curve_cert.empty()) return true;
  auto cert = security::load_cert(o.curve_cert, true);
  if (!cert.cert) {
    spdlog::critical("cannot start: --curve-cert: {}", cert.error);
    return false;
  }
  security.cert = cert.cert;
  security.server_key = cert.cert->public_key;  // a cluster shares one server certificate
  zap = std::make_unique<ZapHandler>(ctx, o.curve_allow, cert.cert->public_key, auth_metrics);
  try {
    if (auto err = zap->start(); !err.empty()) {
      spdlog::critical("cannot start: --curve-allow: {}", err);
      return false;
    }
  } catch (const zmq::error_t& e) {
    spdlog::critical("cannot start the ZAP handler: {}", e.what());
    return false;
  }
  spdlog::info("CURVE on every port; our public key {}", cert.cert->public_key);
  return true;
}

bool Reactors::start(const ServerOptions& o, Storage& st, const DiskWatch& disk) {
  // Names the I/O threads: before the first socket.
  if (o.shared_core) io_batching = std::make_unique<IoBatching>(ctx);
  if (!start_security(o)) return false;
  try {
    connections = std::make_unique<ConnectionWatch>(ctx, limits);
    start_reactors(o, st);
    connections->start();
    if (o.http_port != 0) start_http(o, st, disk);
  } catch (const zmq::error_t& e) {
    spdlog::critical("cannot bind on {}: {}", o.bind, e.what());
    return false;
  } catch (const std::runtime_error& e) {
    spdlog::critical("cannot start: {}", e.what());
    return false;
  } catch (const std::invalid_argument& e) {
    spdlog::critical("cannot start: {}", e.what());
    return false;
  }
  return true;
}

void Reactors::start_reactors(const ServerOptions& o, Storage& st) {
  if (o.chp_port != 0) {
    acl = open_acl(o);
    ChpServerConfig config = chp_config(o, security, acl);
    config.io_batching = io_batching.get();
    config.connections = connections.get();
    if (zap) config.revocations = &auth_metrics.revocations;
    if (o.sync == storage::SyncPolicy::kAlways) config.sync_wal = [db = st.db.get()] { return db->sync_wal(); };
    chp = std::make_unique<ChpServer>(ctx, *st.chp, std::move(config), chp_metrics);
    chp->start();
  }
  if (o.tower_port != 0) {
    tower = std::make_unique<Tower>(ctx, o.bind, o.tower_port, tower_metrics, security,
                                    zap ? &auth_metrics.revocations : nullptr, connections.get());
    tower->start();
  }
  if (o.dafka_port != 0) {
    DafkaStoreConfig config = dafka_config(o, security, zap.get());
    config.io_batching = io_batching.get();
    config.connections = connections.get();
    config.subscriber_buffer_bytes = o.subscriber_buffer_bytes;
    if (o.sync == storage::SyncPolicy::kAlways) config.sync_wal = [db = st.db.get()] { return db->sync_wal(); };
    if (zap) config.revocations = &auth_metrics.revocations;
    dafka = std::make_unique<DafkaStore>(ctx, *st.dafka, st.node_address, std::move(config), dafka_metrics);
    dafka->start();
  }
}

void Reactors::start_http(const ServerOptions& o, Storage& st, const DiskWatch& disk) {
  ServerView v;
  v.db = st.db.get();
  v.chp_store = chp ? st.chp.get() : nullptr;
  v.dafka_log = st.dafka.get();
  v.dafka_metrics_topics = o.dafka_metrics_topics;
  v.disk = disk.enabled() ? &disk : nullptr;
  v.chp = chp ? &chp_metrics : nullptr;
  v.dafka = dafka ? &dafka_metrics : nullptr;
  v.tower = tower ? &tower_metrics : nullptr;
  v.auth = &auth_metrics;
  v.connections = connections.get();
  v.http = &http_metrics;
  if (ChpServer* server = chp.get()) v.ha_state = [server] { return std::string(server->ha_state()); };
  http = std::make_unique<HttpServer>(http_config(o), std::move(v));
  http->start();
}

std::string Reactors::endpoints(const ServerOptions& o) const {
  std::string eps;
  if (chp) {
    for (const auto& ep : chp->endpoints()) eps += " " + ep;
  }
  if (tower) eps += " tower " + tower->endpoints()[0] + " " + tower->endpoints()[1];
  if (http) eps += " http " + http->endpoint();
  if (dafka) eps += " dafka " + dafka->endpoint() + " (node " + dafka->address() + ")";
  if (!o.ha.empty()) {
    eps += " ha " + o.ha + " " + o.ha_bind + " (peer " + o.ha_peer + ", peer CHP " + o.ha_peer_chp + ")";
  }
  return eps.empty() ? " (none)" : eps;
}

void Reactors::stop() {
  if (http) http->stop();
  if (dafka) dafka->stop();
  if (tower) tower->stop();
  if (chp) chp->stop();
  http.reset();
  dafka.reset();
  tower.reset();
  chp.reset();
  if (connections) connections->stop();  // after the reactors: they unwatch their sockets first
  if (zap) zap->stop();
}

}  // namespace zstore::server
