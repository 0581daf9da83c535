// HttpServer: zstored's HTTP side on --bind:--http-port, served with
// Boost.Beast on one io thread that holds every connection (a slow client
// holds a connection slot, never a thread):
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
// length, 400 a bad one). Unknown paths get 404, a known path with another
// method 405 (with Allow). Each connection serves one request and closes;
// its head must arrive within 2 s of accept, its body and the answer within
// their deadlines (http_session.h). At most max_connections are open: a new
// one evicts the oldest still sending its request (http_connections.h).
// /healthz and /metrics run on `threads` worker threads (they read RocksDB
// properties and take short locks), checkpoints on one more, one at a time.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "server/http/http_connections.h"
#include "server/http/http_metrics.h"
#include "server/http/http_session.h"
#include "server/reactor/log.h"
#include "server/http/server_view.h"

namespace zstore::server {

struct HttpConfig {
  std::string bind = "127.0.0.1";               // "*" means every interface
  std::uint16_t port = 0;                       // 0: an ephemeral port (see port())
  std::chrono::milliseconds stale_after{5000};  // a loop silent this long is stuck
  int threads = 2;                              // worker threads for /healthz and /metrics
  std::string token;                            // empty: no authentication
  std::string backup_dir;                       // absolute; empty: checkpoints refused (403)
  // Open connections at most (--http-max-connections); each is one fd.
  std::size_t max_connections = 256;
  HttpDeadlines deadlines;  // head (from accept), body, write
};

class HttpServer : private HttpRoutes {
 public:
  HttpServer(HttpConfig config, ServerView view);
  ~HttpServer() override;
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts serving; throws std::runtime_error naming the address
  // when the port cannot be bound.
  void start();
  // Stops accepting, closes the connections still sending their heads,
  // finishes the requests in progress, joins. Idempotent.
  void stop();

  std::uint16_t port() const { return port_; }
  std::string endpoint() const;                                          // http://bind:port
  std::uint64_t auth_failures() const { return auth_failures_.load(); }  // 401s sent

 private:
  void bind();
  void accept();
  void on_accept(boost::beast::error_code ec, boost::asio::ip::tcp::socket socket);
  std::optional<HttpResponse> on_head(const boost::beast::http::request_header<>& head, const std::string& peer,
                                      std::size_t* body_limit) override;
  void on_request(HttpRequest request, std::shared_ptr<HttpSession> session) override;
  std::optional<HttpResponse> refuse(const boost::beast::http::request_header<>& head, const std::string& path,
                                     const std::string& peer);
  template <typename Fn>
  void run_on(boost::asio::thread_pool& pool, std::shared_ptr<HttpSession> session, Fn fn);
  void admin_checkpoint(const HttpRequest& request, std::shared_ptr<HttpSession> session);
  HttpResponse checkpoint(const std::string& dir);
  void run_io();

  HttpConfig config_;
  ServerView view_;
  HttpMetrics own_metrics_;  // when the view brings none
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_;  // accept again after an error (EMFILE)
  HttpConnections connections_;
  std::unique_ptr<boost::asio::thread_pool> workers_;  // /healthz, /metrics
  std::unique_ptr<boost::asio::thread_pool> admin_;    // checkpoints, one at a time
  std::thread thread_;                                 // runs io_
  std::uint16_t port_ = 0;
  std::atomic<std::uint64_t> auth_failures_{0};
  RateLimiter log_;  // io thread only
};

}  // namespace zstore::server
