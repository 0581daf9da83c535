// zstored: the zstore server. Opens the data directory, starts the enabled
// protocol reactors, and runs until SIGINT or SIGTERM, then shuts down
// cleanly (finish the current batch, sync, close the database).
#include <signal.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <stdexcept>

#include <zmq.hpp>

#include <uuid/uuid.h>

#include "protocol/dafka_codec.h"
#include "server/chp_server.h"
#include "server/dafka_retainer.h"
#include "server/dafka_store.h"
#include "server/disk_watch.h"
#include "server/http_auth.h"
#include "server/http_server.h"
#include "server/tower.h"
#include "server/wal_syncer.h"
#include "server/zap_handler.h"
#include "security/curve_cert.h"
#include "server/log.h"
#include "server/options.h"
#include "storage/chp_store.h"
#include "storage/dafka_log.h"
#include "storage/node_address.h"
#include "storage/database.h"

extern char** environ;

namespace zstore::server {
namespace {

// The --acl rules (null without --acl). Throws std::runtime_error on an
// unreadable or malformed file.
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
  if (!o.ha.empty()) {
    c.ha = HaConfig{o.ha == "primary" ? HaState::kPrimary : HaState::kBackup, o.ha_bind, o.ha_peer, o.ha_peer_chp,
                    std::chrono::milliseconds(o.ha_heartbeat_ms), o.ha_test_cut_file};
  }
  return c;
}

DafkaStoreConfig dafka_config(const ServerOptions& o, const security::SocketSecurity& security,
                              const ZapHandler* zap) {
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
    c.towers.push_back("tcp://" + (wildcard ? std::string("127.0.0.1") : o.bind) + ":" + std::to_string(o.tower_port));
  }
  c.beacon_interval = std::chrono::milliseconds(o.beacon_interval_ms);
  c.beacon_timeout = std::chrono::milliseconds(o.beacon_timeout_ms);
  c.fetch_retry = std::chrono::milliseconds(o.dafka_fetch_retry_ms);
  c.max_fetch_retries = static_cast<int>(o.dafka_fetch_retries);
  c.max_batch_bytes = o.max_batch_bytes;
  c.peers = o.dafka_peers;
  return c;
}

ServerView server_view(storage::Database* db, ChpServer* chp, const ChpMetrics* chp_metrics,
                       const DafkaMetrics* dafka_metrics, const TowerMetrics* tower_metrics, const DiskWatch* disk,
                       const storage::DafkaLog* dafka_log, AuthMetrics* auth, const storage::ChpStore* chp_store) {
  ServerView v;
  v.chp_store = chp ? chp_store : nullptr;
  v.auth = auth;
  v.db = db;
  v.dafka_log = dafka_log;
  v.disk = disk->enabled() ? disk : nullptr;
  v.chp = chp ? chp_metrics : nullptr;
  v.dafka = dafka_metrics;
  v.tower = tower_metrics;
  if (chp) v.ha_state = [chp] { return std::string(chp->ha_state()); };
  return v;
}

// The HTTP settings; throws std::runtime_error on an unusable token file
// or backup directory.
HttpConfig http_config(const ServerOptions& o) {
  HttpConfig c;
  c.bind = o.bind;
  c.port = o.http_port;
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

std::string new_node_address() {
  uuid_t uuid;
  uuid_generate(uuid);
  return protocol::dafka::make_address(uuid);
}

sigset_t handled_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

// SIGHUP: re-reads the --acl rules; a bad file keeps the rules in force.
void reload_acl(ChpAclFile& acl) {
  if (auto err = acl.reload(); !err.empty()) {
    spdlog::error("SIGHUP: --acl: {}; keeping the previous access rules", err);
  } else {
    spdlog::info("SIGHUP: CHP access rules: {} rule(s) from {}", acl.current()->rules(), acl.path());
  }
}

// Waits for SIGINT or SIGTERM; a SIGHUP meanwhile re-reads the CURVE allow
// list and the access rules.
int wait_for_signal(ZapHandler* zap, ChpAclFile* acl) {
  sigset_t set = handled_signals();
  int sig = 0;
  while (sigwait(&set, &sig) == 0 && sig == SIGHUP) {
    if (!zap) {
      spdlog::info("SIGHUP: nothing to reload (no --curve-allow)");
    } else if (auto err = zap->reload(); !err.empty()) {
      spdlog::error("SIGHUP: {}; keeping the previous allow list", err);
    }
    if (acl) reload_acl(*acl);
  }
  return sig;
}

// With --curve-cert: our certificate for every socket, and the ZAP handler
// judging clients (started before any socket binds). False: cannot start.
bool start_security(zmq::context_t& ctx, const ServerOptions& o, AuthMetrics& metrics,
                    security::SocketSecurity* security, std::unique_ptr<ZapHandler>* zap) {
  if (o.curve_cert.empty()) return true;
  auto cert = security::load_cert(o.curve_cert, true);
  if (!cert.cert) {
    spdlog::critical("cannot start: --curve-cert: {}", cert.error);
    return false;
  }
  security->cert = cert.cert;
  security->server_key = cert.cert->public_key;  // a cluster shares one server certificate
  *zap = std::make_unique<ZapHandler>(ctx, o.curve_allow, cert.cert->public_key, metrics);
  try {
    if (auto err = (*zap)->start(); !err.empty()) {
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

// A standalone server's new map starts its first epoch at the clock
// (chp_epochs.h) with a random salt rather than at 0, so its sequences are
// its own: a client resuming from another server's sequence
// (docs/chp-extensions.md) is never taken for one of ours. (A pair's
// members start clock-based epochs at every takeover.)
storage::Status start_own_history(storage::ChpStore& store) {
  if (store.last_sequence() != 0 || store.epochs().size() != 1) return storage::Status::Ok();
  std::random_device random;
  std::uint64_t salt = random() & ((1u << 20) - 1);
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch());
  return store.begin_epoch(0, static_cast<std::uint64_t>(now.count()), salt);
}

// What zstored serves from: the database, the CHP map and the Dafka log.
struct Storage {
  std::unique_ptr<storage::Database> db;
  std::unique_ptr<storage::ChpStore> chp;
  std::unique_ptr<storage::DafkaLog> dafka;  // null with --dafka-port 0
  std::string node_address;
};

// Opens it all; false (after a critical log line) when it cannot.
bool open_storage(const ServerOptions& o, Storage* st) {
  storage::DatabaseOptions dbo;
  dbo.sync = o.sync;
  storage::Status s = storage::Database::Open(o.data_dir, dbo, &st->db);
  if (s.ok()) s = storage::ChpStore::Open(st->db.get(), &st->chp, o.chp_history);
  if (s.ok() && o.ha.empty()) s = start_own_history(*st->chp);
  if (s.ok() && o.dafka_port != 0) {
    storage::DafkaLogOptions dlo;
    dlo.retention = o.dafka_retention;
    s = storage::DafkaLog::Open(st->db.get(), &st->dafka, dlo);
    if (s.ok()) s = storage::load_or_store_node_address(st->db.get(), new_node_address(), &st->node_address);
  }
  if (!s.ok()) spdlog::critical("cannot start: {}", s.message());
  return s.ok();
}

// The sockets' side of zstored: the CHP server, the tower, the Dafka store
// and the HTTP server, with their metrics.
struct Reactors {
  zmq::context_t ctx;
  AuthMetrics auth_metrics;
  security::SocketSecurity security;
  std::unique_ptr<ZapHandler> zap;  // stopped after the reactors below
  std::shared_ptr<ChpAclFile> acl;  // --acl rules, shared with the CHP server
  ChpMetrics chp_metrics;
  DafkaMetrics dafka_metrics;
  TowerMetrics tower_metrics;
  std::unique_ptr<ChpServer> chp;
  std::unique_ptr<Tower> tower;
  std::unique_ptr<DafkaStore> dafka;
  std::unique_ptr<HttpServer> http;

  // Starts what the options enable; false (after a critical log line) on a failure.
  bool start(const ServerOptions& o, Storage& st, const DiskWatch& disk) {
    if (!start_security(ctx, o, auth_metrics, &security, &zap)) return false;
    try {
      start_reactors(o, st);
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

  void start_reactors(const ServerOptions& o, Storage& st) {
    if (o.chp_port != 0) {
      acl = open_acl(o);
      chp = std::make_unique<ChpServer>(ctx, *st.chp, chp_config(o, security, acl), chp_metrics);
      chp->start();
    }
    if (o.tower_port != 0) {
      tower = std::make_unique<Tower>(ctx, o.bind, o.tower_port, tower_metrics, security);
      tower->start();
    }
    if (o.dafka_port != 0) {
      dafka = std::make_unique<DafkaStore>(ctx, *st.dafka, st.node_address, dafka_config(o, security, zap.get()),
                                           dafka_metrics);
      dafka->start();
    }
  }

  void start_http(const ServerOptions& o, Storage& st, const DiskWatch& disk) {
    http = std::make_unique<HttpServer>(
        http_config(o), server_view(st.db.get(), chp.get(), &chp_metrics, dafka ? &dafka_metrics : nullptr,
                                    tower ? &tower_metrics : nullptr, &disk, st.dafka.get(), &auth_metrics,
                                    st.chp.get()));
    http->start();
  }

  std::string endpoints(const ServerOptions& o) const {
    std::string eps;
    if (chp) {
      for (const auto& ep : chp->endpoints()) eps += " " + ep;
    }
    if (tower) eps += " tower " + tower->endpoints()[0] + " " + tower->endpoints()[1];
    if (http) eps += " http " + http->endpoint();
    if (dafka) eps += " dafka " + dafka->endpoint() + " (node " + dafka->address() + ")";
    if (!o.ha.empty()) eps += " ha " + o.ha + " " + o.ha_bind + " (peer " + o.ha_peer + ", peer CHP " + o.ha_peer_chp + ")";
    return eps.empty() ? " (none)" : eps;
  }

  // HTTP first (it reads the reactors' state), then the reactors. Idempotent.
  void stop() {
    if (http) http->stop();
    if (dafka) dafka->stop();
    if (tower) tower->stop();
    if (chp) chp->stop();
    http.reset();
    dafka.reset();
    tower.reset();
    chp.reset();
    if (zap) zap->stop();
  }
};

int run(const ServerOptions& o) {
  // Block the handled signals in every thread; main waits for them.
  sigset_t set = handled_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  Storage st;
  if (!open_storage(o, &st)) return 1;
  auto& db = st.db;
  auto& chp_store = st.chp;
  auto& dafka_log = st.dafka;

  // Declared after db (destroyed first) and stopped after the reactors.
  std::unique_ptr<WalSyncer> syncer;
  if (o.sync == storage::SyncPolicy::kBatch) {
    syncer = std::make_unique<WalSyncer>(*db, std::chrono::milliseconds(o.sync_interval_ms));
    syncer->start();
  }

  DiskWatch disk(*db, o.min_free_bytes, std::chrono::seconds(1));
  disk.start();

  std::unique_ptr<DafkaRetainer> retainer;
  if (dafka_log) {
    retainer = std::make_unique<DafkaRetainer>(*db, *dafka_log, o.dafka_retention,
                                               std::chrono::milliseconds(o.dafka_retention_interval_ms));
    retainer->start();
  }

  Reactors reactors;
  if (!reactors.start(o, st, disk)) return 1;
  spdlog::info("zstored started: data dir {}, sync {}, endpoints:{}", o.data_dir, storage::to_string(o.sync),
               reactors.endpoints(o));

  int sig = wait_for_signal(reactors.zap.get(), reactors.acl.get());
  spdlog::info("received {}, shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM");
  reactors.stop();              // HTTP first: it reads the database and the reactors' state
  if (syncer) syncer->stop();  // syncs what the reactors wrote last
  disk.stop();
  if (retainer) retainer->stop();
  retainer.reset();
  dafka_log.reset();
  chp_store.reset();
  if (auto s = db->close(); !s.ok()) {
    spdlog::error("database close: {}", s.message());
    return 1;
  }
  spdlog::info("zstored stopped cleanly");
  return 0;
}

}  // namespace
}  // namespace zstore::server

int main(int argc, char** argv) {
  auto outcome = zstore::server::parse_options(argc, argv, environ);
  if (!outcome.options) {
    std::fputs((outcome.message + "\n").c_str(), outcome.exit_code == 0 ? stdout : stderr);
    return outcome.exit_code;
  }
  zstore::server::init_logging(outcome.options->log_level);
  return zstore::server::run(*outcome.options);
}
