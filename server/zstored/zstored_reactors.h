// The sockets' side of zstored: CURVE (our certificate and the ZAP handler),
// the CHP server, the embedded tower, the Dafka store and the HTTP server,
// with their metrics. start() starts what the options enable; stop() stops
// HTTP first (it reads the others' state), the ZAP handler last.
#pragma once

#include <memory>
#include <string>

#include <zmq.hpp>

#include "server/access/auth_metrics.h"
#include "server/chp/chp_server.h"
#include "server/reactor/connection_watch.h"
#include "server/dafka/dafka_store.h"
#include "server/jobs/disk_watch.h"
#include "server/http/http_server.h"
#include "server/reactor/io_batching.h"
#include "server/options/options.h"
#include "server/dafka/tower.h"
#include "server/access/zap_handler.h"
#include "server/zstored/zstored_storage.h"

namespace zstore::server {

struct Reactors {
  zmq::context_t ctx;
  // Made by start() before any socket; outlives the reactors below.
  std::unique_ptr<IoBatching> io_batching;
  // The connection caps (set before start(); fd_budget.h derives the
  // total). Its watch starts after the reactors and stops after them.
  ConnectionLimits limits;
  std::unique_ptr<ConnectionWatch> connections;
  AuthMetrics auth_metrics;
  HttpMetrics http_metrics;
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
  bool start(const ServerOptions& o, Storage& st, const DiskWatch& disk);
  // " ENDPOINT..." of what runs, for the start line; " (none)" when nothing does.
  std::string endpoints(const ServerOptions& o) const;
  // HTTP first (it reads the reactors' state), then the reactors. Idempotent.
  void stop();

 private:
  bool start_security(const ServerOptions& o);
  void start_reactors(const ServerOptions& o, Storage& st);
  void start_http(const ServerOptions& o, Storage& st, const DiskWatch& disk);
};

}  // namespace zstore::server
