// zstored: the zstore server. Opens the data directory, starts the enabled
// protocol reactors, and runs until SIGINT or SIGTERM, then shuts down
// cleanly (finish the current batch, sync, close the database).
#include <signal.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include <zmq.hpp>

#include <uuid/uuid.h>

#include "protocol/dafka_codec.h"
#include "server/chp_server.h"
#include "server/dafka_store.h"
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

// Throws std::runtime_error on an unreadable or malformed --acl file.
ChpServerConfig chp_config(const ServerOptions& o, const security::SocketSecurity& security) {
  ChpServerConfig c;
  c.security = security;
  if (!o.acl.empty()) {
    std::string error;
    auto acl = ChpAcl::load(o.acl, &error);
    if (!acl) throw std::runtime_error("--acl: " + error);
    spdlog::info("CHP access rules: {} rule(s) from {}", acl->rules(), o.acl);
    c.acl = std::make_shared<const ChpAcl>(std::move(*acl));
  }
  c.bind = o.bind;
  c.port = o.chp_port;
  c.limits.max_value_bytes = o.max_value_bytes;
  c.hugz_interval = std::chrono::milliseconds(o.hugz_interval_ms);
  if (!o.ha.empty()) {
    c.ha = HaConfig{o.ha == "primary" ? HaState::kPrimary : HaState::kBackup, o.ha_bind, o.ha_peer, o.ha_peer_chp,
                    std::chrono::milliseconds(o.ha_heartbeat_ms), o.ha_test_cut_file};
  }
  return c;
}

DafkaStoreConfig dafka_config(const ServerOptions& o) {
  DafkaStoreConfig c;
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
  c.peers = o.dafka_peers;
  return c;
}

ServerView server_view(storage::Database* db, ChpServer* chp, const ChpMetrics* chp_metrics,
                       const DafkaMetrics* dafka_metrics, const TowerMetrics* tower_metrics, AuthMetrics* auth) {
  ServerView v;
  v.auth = auth;
  v.db = db;
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

// Waits for SIGINT or SIGTERM; a SIGHUP meanwhile re-reads the CURVE allow list.
int wait_for_signal(ZapHandler* zap) {
  sigset_t set = handled_signals();
  int sig = 0;
  while (sigwait(&set, &sig) == 0 && sig == SIGHUP) {
    if (!zap) {
      spdlog::info("SIGHUP: nothing to reload (no --curve-allow)");
    } else if (auto err = zap->reload(); !err.empty()) {
      spdlog::error("SIGHUP: {}; keeping the previous allow list", err);
    }
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

// Opens the database and the stores the options enable.
storage::Status open_storage(const ServerOptions& o, std::unique_ptr<storage::Database>* db,
                             std::unique_ptr<storage::ChpStore>* chp_store,
                             std::unique_ptr<storage::DafkaLog>* dafka_log, std::string* node_address) {
  storage::DatabaseOptions dbo;
  dbo.sync = o.sync;
  if (auto s = storage::Database::Open(o.data_dir, dbo, db); !s.ok()) return s;
  if (auto s = storage::ChpStore::Open(db->get(), chp_store, o.chp_history); !s.ok()) return s;
  if (o.dafka_port == 0) return storage::Status::Ok();
  if (auto s = storage::DafkaLog::Open(db->get(), dafka_log); !s.ok()) return s;
  return storage::load_or_store_node_address(db->get(), new_node_address(), node_address);
}

// The endpoints line of the start-up log.
std::string endpoints_text(const ServerOptions& o, ChpServer* chp, Tower* tower, DafkaStore* dafka, HttpServer* http) {
  std::string eps;
  if (chp) {
    for (const auto& ep : chp->endpoints()) eps += " " + ep;
  }
  if (tower) eps += " tower " + tower->endpoints()[0] + " " + tower->endpoints()[1];
  if (http) eps += " http " + http->endpoint();
  if (dafka) eps += " dafka " + dafka->endpoint() + " (node " + dafka->address() + ")";
  if (!o.ha.empty()) eps += " ha " + o.ha + " " + o.ha_bind + " (peer " + o.ha_peer + ", peer CHP " + o.ha_peer_chp + ")";
  return eps;
}

int run(const ServerOptions& o) {
  // Block the handled signals in every thread; main waits for them.
  sigset_t set = handled_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  std::unique_ptr<storage::Database> db;
  std::unique_ptr<storage::ChpStore> chp_store;
  std::unique_ptr<storage::DafkaLog> dafka_log;
  std::string node_address;
  if (auto s = open_storage(o, &db, &chp_store, &dafka_log, &node_address); !s.ok()) {
    spdlog::critical("cannot start: {}", s.message());
    return 1;
  }

  // Declared after db (destroyed first) and stopped after the reactors.
  std::unique_ptr<WalSyncer> syncer;
  if (o.sync == storage::SyncPolicy::kBatch) {
    syncer = std::make_unique<WalSyncer>(*db, std::chrono::milliseconds(o.sync_interval_ms));
    syncer->start();
  }

  zmq::context_t ctx;
  AuthMetrics auth_metrics;
  security::SocketSecurity security;
  std::unique_ptr<ZapHandler> zap;  // destroyed after the reactors below
  if (!start_security(ctx, o, auth_metrics, &security, &zap)) return 1;
  ChpMetrics chp_metrics;
  DafkaMetrics dafka_metrics;
  TowerMetrics tower_metrics;
  std::unique_ptr<ChpServer> chp;
  std::unique_ptr<Tower> tower;
  std::unique_ptr<DafkaStore> dafka;
  std::unique_ptr<HttpServer> http;
  try {
    if (o.chp_port != 0) {
      chp = std::make_unique<ChpServer>(ctx, *chp_store, chp_config(o, security), chp_metrics);
      chp->start();
    }
    if (o.tower_port != 0) {
      tower = std::make_unique<Tower>(ctx, o.bind, o.tower_port, tower_metrics);
      tower->start();
    }
    if (o.dafka_port != 0) {
      dafka = std::make_unique<DafkaStore>(ctx, *dafka_log, node_address, dafka_config(o), dafka_metrics);
      dafka->start();
    }
    if (o.http_port != 0) {
      http = std::make_unique<HttpServer>(
          http_config(o), server_view(db.get(), chp.get(), &chp_metrics, dafka ? &dafka_metrics : nullptr,
                                      tower ? &tower_metrics : nullptr, &auth_metrics));
      http->start();
    }
  } catch (const zmq::error_t& e) {
    spdlog::critical("cannot bind on {}: {}", o.bind, e.what());
    return 1;
  } catch (const std::invalid_argument& e) {
    spdlog::critical("cannot start: {}", e.what());
    return 1;
  } catch (const std::runtime_error& e) {
    spdlog::critical("cannot start: {}", e.what());
    return 1;
  }
  std::string eps = endpoints_text(o, chp.get(), tower.get(), dafka.get(), http.get());
  spdlog::info("zstored started: data dir {}, sync {}, endpoints:{}", o.data_dir, storage::to_string(o.sync),
               eps.empty() ? " (none)" : eps);

  int sig = wait_for_signal(zap.get());
  spdlog::info("received {}, shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM");
  if (http) http->stop();  // first: it reads the database and the reactors' state
  if (dafka) dafka->stop();
  if (tower) tower->stop();
  if (chp) chp->stop();
  if (syncer) syncer->stop();  // syncs what the reactors wrote last
  http.reset();
  dafka.reset();
  tower.reset();
  chp.reset();
  if (zap) zap->stop();
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
