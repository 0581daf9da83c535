#include "server/http_server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <condition_variable>
#include <algorithm>
#include <deque>
#include <list>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "server/db_admin.h"
#include "server/http_auth.h"
#include "server/http_health.h"
#include "server/http_limits.h"
#include "server/metrics_text.h"

namespace zstore::server {
namespace {

using Handler = httplib::Server::Handler;
using Setter = httplib::Server& (httplib::Server::*)(const std::string&, Handler);

void json_reply(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump() + "\n", "application/json");
}

// Registers 405 for every method of `path` but `allowed`.
void refuse_other_methods(httplib::Server& s, const std::string& path, const std::string& allowed) {
  Handler refuse = [allowed](const httplib::Request& req, httplib::Response& res) {
    res.set_header("Allow", allowed);
    json_reply(res, 405, {{"error", "method " + req.method + " not allowed on " + req.path + ", use " + allowed}});
  };
  const std::vector<std::pair<std::string, Setter>> methods = {
      {"GET", &httplib::Server::Get},     {"POST", &httplib::Server::Post},       {"PUT", &httplib::Server::Put},
      {"PATCH", &httplib::Server::Patch}, {"DELETE", &httplib::Server::Delete}, {"OPTIONS", &httplib::Server::Options}};
  for (const auto& [name, setter] : methods) {
    if (name != allowed) (s.*setter)(path, refuse);
  }
}

// What an enqueue that took its job returns: nothing, or true.
template <typename R>
R accepted() {
  if constexpr (!std::is_void_v<R>) return R(true);
}

// cpp-httplib's ThreadPool has a fixed number of threads: as many slow
// clients as threads (headers sent a byte a second) would leave none for
// /healthz. This one starts a thread when a connection arrives and every
// thread is busy, up to max; threads above min end after a second idle.
class Workers : public httplib::TaskQueue {
 public:
  Workers(std::size_t min, std::size_t max) : min_(std::max<std::size_t>(1, min)), max_(std::max(min_, max)) {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < min_; ++i) spawn();
  }
  ~Workers() override { shutdown(); }

  // cpp-httplib 0.11 (Debian 12) declares enqueue void, 0.18 (Debian 13)
  // bool (false: the connection is refused); this overrides either.
  using EnqueueResult = decltype(std::declval<httplib::TaskQueue&>().enqueue(std::function<void()>()));
  EnqueueResult enqueue(std::function<void()> fn) override {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(fn));
    if (idle_ < jobs_.size() && running_ < max_) spawn();
    cond_.notify_one();
    return accepted<EnqueueResult>();
  }

  void shutdown() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    cond_.notify_all();
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
    threads_.clear();
  }

 private:
  void spawn() {  // under mutex_
    for (auto it = threads_.begin(); it != threads_.end();) {  // join those that ended
      if (std::find(ended_.begin(), ended_.end(), it->get_id()) == ended_.end()) {
        ++it;
        continue;
      }
      it->join();
      it = threads_.erase(it);
    }
    ended_.clear();
    ++running_;
    threads_.emplace_back([this] { work(); });
  }

  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      ++idle_;
      bool woke = cond_.wait_for(lock, std::chrono::seconds(1), [&] { return !jobs_.empty() || stopping_; });
      --idle_;
      if (jobs_.empty() && (stopping_ || (!woke && running_ > min_))) break;
      if (jobs_.empty()) continue;
      auto fn = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      fn();
      lock.lock();
    }
    --running_;
    ended_.push_back(std::this_thread::get_id());
  }

  const std::size_t min_;
  const std::size_t max_;
  std::mutex mutex_;
  std::condition_variable cond_;
  std::deque<std::function<void()>> jobs_;
  std::list<std::thread> threads_;
  std::vector<std::thread::id> ended_;  // threads_ that returned, joined at the next spawn
  std::size_t running_ = 0;
  std::size_t idle_ = 0;
  bool stopping_ = false;
};

// A request whose body its endpoint does not take: refused from its
// headers (res filled in), before the body is read.
bool refused_body(const httplib::Request& req, httplib::Response& res) {
  std::string length = req.get_header_value("Content-Length");
  bool has_length = req.has_header("Content-Length");
  auto refusal = refuse_body(req.method, req.path, has_length ? &length : nullptr, req.has_header("Transfer-Encoding"));
  if (!refusal) return false;
  // A known path asked with another method is answered as it would be
  // anyway (405), still without reading the body.
  static const std::vector<std::pair<std::string, std::string>> allowed = {
      {"/healthz", "GET"}, {"/metrics", "GET"}, {"/admin/checkpoint", "POST"}};
  for (const auto& [path, method] : allowed) {
    if (req.path == path && req.method != method) {
      res.set_header("Allow", method);
      json_reply(res, 405, {{"error", "method " + req.method + " not allowed on " + req.path + ", use " + method}});
      return true;
    }
  }
  json_reply(res, refusal->status, {{"error", refusal->error}});
  return true;
}

}  // namespace

HttpServer::HttpServer(HttpConfig config, ServerView view)
    : config_(std::move(config)), view_(std::move(view)), server_(std::make_unique<httplib::Server>()) {}

HttpServer::~HttpServer() { stop(); }

std::string HttpServer::endpoint() const { return "http://" + config_.bind + ":" + std::to_string(port_); }

void HttpServer::routes() {
  httplib::Server& s = *server_;
  // A client that sends "Expect: 100-continue" learns before sending its body.
  s.set_expect_100_continue_handler([](const httplib::Request& req, httplib::Response& res) {
    return refused_body(req, res) ? res.status : 100;
  });
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (refused_body(req, res)) {  // first: no body is read, no token compared
      std::lock_guard lock(auth_log_mutex_);
      auth_log_.log(spdlog::level::warn, "HTTP {} {} from {}: refused before reading its body: {}", req.method,
                    req.path, req.remote_addr, res.body.substr(0, res.body.size() - 1));
      return httplib::Server::HandlerResponse::Handled;
    }
    bool guarded = req.path == "/metrics" || req.path.rfind("/admin/", 0) == 0;
    if (config_.token.empty() || !guarded || bearer_matches(req.get_header_value("Authorization"), config_.token)) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    ++auth_failures_;
    if (view_.auth) view_.auth->count_failure("http");
    {
      std::lock_guard lock(auth_log_mutex_);
      auth_log_.log(spdlog::level::warn, "HTTP {} {} from {}: missing or wrong bearer token", req.method, req.path,
                    req.remote_addr);
    }
    res.set_header("WWW-Authenticate", "Bearer");
    json_reply(res, 401, {{"error", "this path needs 'Authorization: Bearer TOKEN' (--http-token-file)"}});
    return httplib::Server::HandlerResponse::Handled;
  });
  s.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    Health h = check_health(view_, config_.stale_after);
    res.status = h.healthy ? 200 : 503;
    res.set_content(h.body, "application/json");
  });
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(render_metrics(view_), "text/plain; version=0.0.4; charset=utf-8");
  });
  s.Post("/admin/checkpoint", [this](const httplib::Request& req, httplib::Response& res) {
    if (!req.has_param("dir")) return json_reply(res, 400, {{"error", "missing parameter dir (a new subdirectory name)"}});
    std::string error;
    auto target = backup_target(config_.backup_dir, req.get_param_value("dir"), &error);
    if (!target) return json_reply(res, config_.backup_dir.empty() ? 403 : 400, {{"error", error}});
    int status = 0;
    std::string body;
    checkpoint(*target, &status, &body);
    res.status = status;
    res.set_content(body, "application/json");
  });
  refuse_other_methods(s, "/healthz", "GET");
  refuse_other_methods(s, "/metrics", "GET");
  refuse_other_methods(s, "/admin/checkpoint", "POST");
  s.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 404) return json_reply(res, 404, {{"error", "no such path " + req.path}});
    json_reply(res, res.status, {{"error", "HTTP status " + std::to_string(res.status)}});
  });
  s.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    spdlog::error("HTTP {} {}: {}", req.method, req.path, what);
    json_reply(res, 500, {{"error", what}});
  });
}

void HttpServer::checkpoint(const std::string& dir, int* status, std::string* body) {
  std::lock_guard lock(checkpoint_mutex_);
  auto started = std::chrono::steady_clock::now();
  CheckpointResult r = write_checkpoint(*view_.db, dir);
  switch (r.error) {
    case CheckpointError::kNone: *status = 201; break;
    case CheckpointError::kBadTarget: *status = 400; break;
    case CheckpointError::kExists: *status = 409; break;
    case CheckpointError::kFailed: *status = 500; break;
  }
  if (r.error != CheckpointError::kNone) {
    spdlog::warn("admin checkpoint refused: {}", r.message);
    *body = nlohmann::json{{"error", r.message}}.dump() + "\n";
    return;
  }
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  spdlog::info("admin checkpoint written to {} in {} ms", r.message, ms.count());
  *body = nlohmann::json{{"checkpoint", r.message}, {"milliseconds", ms.count()}}.dump() + "\n";
}

void HttpServer::start() {
  routes();
  auto threads = static_cast<std::size_t>(std::max(1, config_.threads));
  auto max_threads = static_cast<std::size_t>(std::max(config_.threads, config_.max_threads));
  server_->new_task_queue = [threads, max_threads] { return new Workers(threads, max_threads); };
  // SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, which would
  // let a second server share (and steal requests from) a port in use.
  server_->set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server_->set_keep_alive_timeout(1);  // an idle client delays shutdown at most this long
  // One request per connection: after a refused body httplib would read the
  // body's bytes as the next request line, into an unbounded buffer.
  server_->set_keep_alive_max_count(1);
  server_->set_payload_max_length(kMaxFormBytes);  // a second guard behind refused_body
  server_->set_read_timeout(2, 0);
  server_->set_write_timeout(5, 0);
  std::string host = config_.bind == "*" ? "0.0.0.0" : config_.bind;
  bool bound = false;
  if (config_.port == 0) {
    int port = server_->bind_to_any_port(host);
    bound = port > 0;
    if (bound) port_ = static_cast<std::uint16_t>(port);
  } else {
    bound = server_->bind_to_port(host, config_.port);
    port_ = config_.port;
  }
  if (!bound) throw std::runtime_error("cannot bind HTTP on " + host + ":" + std::to_string(config_.port));
  thread_ = std::thread([this] { server_->listen_after_bind(); });
}

void HttpServer::stop() {
  if (!thread_.joinable()) return;
  server_->stop();
  thread_.join();
}

}  // namespace zstore::server
