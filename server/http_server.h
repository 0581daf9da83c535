// HttpServer: zstored's HTTP side on --bind:--http-port, served by
// cpp-httplib on its own small thread pool:
//   GET  /healthz            200 / 503 with a JSON body (http_health.h)
//   GET  /metrics            Prometheus text (metrics_text.h)
//   POST /admin/checkpoint   dir=ABSOLUTE_DIR (query or form): writes a
//                            RocksDB checkpoint on the server host (db_admin.h);
//                            201, or 400 bad dir / 409 exists / 500 failed.
// Unknown paths get 404, a known path with another method 405 (with Allow).
// The admin endpoint writes files where the server runs: bind to loopback.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "server/server_view.h"

namespace httplib {
class Server;
}

namespace zstore::server {

struct HttpConfig {
  std::string bind = "127.0.0.1";  // "*" means every interface
  std::uint16_t port = 0;          // 0: an ephemeral port (see port())
  std::chrono::milliseconds stale_after{5000};  // a loop silent this long is stuck
  int threads = 2;
};

class HttpServer {
 public:
  HttpServer(HttpConfig config, ServerView view);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts serving; throws std::runtime_error naming the address
  // when the port cannot be bound.
  void start();
  // Stops accepting, finishes the requests in progress, joins. Idempotent.
  void stop();

  std::uint16_t port() const { return port_; }
  std::string endpoint() const;  // http://bind:port

 private:
  void routes();
  void checkpoint(const std::string& dir, int* status, std::string* body);

  HttpConfig config_;
  ServerView view_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::mutex checkpoint_mutex_;  // one checkpoint at a time
  std::uint16_t port_ = 0;
};

}  // namespace zstore::server
