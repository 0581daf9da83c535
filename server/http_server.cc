#include "server/http_server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <vector>

#include "server/db_admin.h"
#include "server/http_auth.h"
#include "server/http_health.h"
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

}  // namespace

HttpServer::HttpServer(HttpConfig config, ServerView view)
    : config_(std::move(config)), view_(std::move(view)), server_(std::make_unique<httplib::Server>()) {}

HttpServer::~HttpServer() { stop(); }

std::string HttpServer::endpoint() const { return "http://" + config_.bind + ":" + std::to_string(port_); }

void HttpServer::routes() {
  httplib::Server& s = *server_;
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
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
  int threads = config_.threads;
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<std::size_t>(threads)); };
  // SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, which would
  // let a second server share (and steal requests from) a port in use.
  server_->set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server_->set_keep_alive_timeout(1);  // an idle client delays shutdown at most this long
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
