// HttpServer: zstored's HTTP side on --bind:--http-port, served by
// cpp-httplib on its own small thread pool:
//   GET  /healthz            200 / 503 with a JSON body (http_health.h)
//   GET  /metrics            Prometheus text (metrics_text.h)
//   POST /admin/checkpoint   dir=NAME (query or form): writes a RocksDB
//                            checkpoint into backup_dir/NAME (db_admin.h,
//                            http_auth.h); 201, or 400 bad name / 403 no
//                            backup_dir / 409 exists / 500 failed.
// With a token, /metrics and /admin/* need "Authorization: Bearer TOKEN"
// (401 otherwise, counted); /healthz stays open.
// Before that, and before its body is read, a request whose body is larger
// than its endpoint takes (http_limits.h) is refused: 413 (411 without a
// length, 400 a bad one). Every connection serves one request and closes
// (an unread body is never taken for the next request); reads time out
// after 2 s without a byte.
// Unknown paths get 404, a known path with another method 405 (with Allow).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "server/log.h"
#include "server/server_view.h"

namespace httplib {
class Server;
}

namespace zstore::server {

struct HttpConfig {
  std::string bind = "127.0.0.1";  // "*" means every interface
  std::uint16_t port = 0;          // 0: an ephemeral port (see port())
  std::chrono::milliseconds stale_after{5000};  // a loop silent this long is stuck
  // Worker threads: `threads` wait for connections; more start while all
  // are busy, up to max_threads (a client that sends its headers slowly
  // holds one for as long as it keeps sending), and end once idle again.
  int threads = 2;
  std::string token;       // empty: no authentication
  std::string backup_dir;  // absolute; empty: checkpoints refused (403)
  int max_threads = 32;    // last: aggregate initialisers of the fields above stay valid
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
  std::uint64_t auth_failures() const { return auth_failures_.load(); }  // 401s sent

 private:
  void routes();
  void checkpoint(const std::string& dir, int* status, std::string* body);

  HttpConfig config_;
  ServerView view_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::mutex checkpoint_mutex_;  // one checkpoint at a time
  std::uint16_t port_ = 0;
  std::atomic<std::uint64_t> auth_failures_{0};
  std::mutex auth_log_mutex_;  // the pool's threads share the limiter
  RateLimiter auth_log_;
};

}  // namespace zstore::server
