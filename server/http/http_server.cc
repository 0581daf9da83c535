#include "server/http/http_server.h"

#include <boost/asio/post.hpp>
#include <boost/beast/core/error.hpp>

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <array>
#include <stdexcept>
#include <utility>

#include "server/http/db_admin.h"
#include "server/http/http_auth.h"
#include "server/http/http_form.h"
#include "server/http/http_health.h"
#include "server/http/http_limits.h"
#include "server/http/metrics_text.h"

namespace zstore::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

struct Route {
  std::string_view path;
  http::verb method;
};
constexpr std::array<Route, 3> kRoutes = {
    {{"/healthz", http::verb::get}, {"/metrics", http::verb::get}, {"/admin/checkpoint", http::verb::post}}};

// Beast's string_view (boost::string_view in Boost 1.74, boost::core in 1.83) as std::string_view.
std::string_view sv(beast::string_view s) { return {s.data(), s.size()}; }

HttpResponse json_reply(http::status status, const nlohmann::json& body) {
  return http_json_response(status, body.dump() + "\n");
}

const Route* route_of(std::string_view path) {
  for (const auto& r : kRoutes) {
    if (r.path == path) return &r;
  }
  return nullptr;
}

HttpResponse method_not_allowed(const Route& r, std::string_view method) {
  std::string allowed(sv(http::to_string(r.method)));
  HttpResponse res = json_reply(
      http::status::method_not_allowed,
      {{"error", "method " + std::string(method) + " not allowed on " + std::string(r.path) + ", use " + allowed}});
  res.set(http::field::allow, allowed);
  return res;
}

std::string path_of(std::string_view target) { return std::string(target.substr(0, target.find('?'))); }

std::string query_of(std::string_view target) {
  auto q = target.find('?');
  return q == std::string_view::npos ? std::string() : std::string(target.substr(q + 1));
}

void log_escaped(const std::exception& e) { spdlog::error("HTTP io thread: {}", e.what()); }

}  // namespace

HttpServer::HttpServer(HttpConfig config, ServerView view)
    : config_(std::move(config)),
      view_([&] {
        if (!view.http) view.http = &own_metrics_;
        return std::move(view);
      }()),
      acceptor_(io_),
      retry_(io_),
      connections_(config_.max_connections, *view_.http) {}

HttpServer::~HttpServer() { stop(); }

std::string HttpServer::endpoint() const { return "http://" + config_.bind + ":" + std::to_string(port_); }

void HttpServer::bind() {
  std::string host = config_.bind == "*" ? "0.0.0.0" : config_.bind;
  std::string where = host + ":" + std::to_string(config_.port);
  beast::error_code ec;
  auto endpoints = tcp::resolver(io_).resolve(host, std::to_string(config_.port), tcp::resolver::passive, ec);
  if (ec || endpoints.empty()) throw std::runtime_error("cannot bind HTTP on " + where + ": " + ec.message());
  tcp::endpoint ep = endpoints.begin()->endpoint();
  // Each step's error in ec, not its return value (void or error_code by Boost version).
  acceptor_.open(ep.protocol(), ec);
  // SO_REUSEADDR only (no SO_REUSEPORT): a second server cannot share a port in use.
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(ep, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (!ec) port_ = acceptor_.local_endpoint(ec).port();
  if (!ec) return;
  beast::error_code ignored;
  acceptor_.close(ignored);
  throw std::runtime_error("cannot bind HTTP on " + where + ": " + ec.message());
}

void HttpServer::start() {
  bind();
  workers_ = std::make_unique<asio::thread_pool>(static_cast<std::size_t>(std::max(1, config_.threads)));
  admin_ = std::make_unique<asio::thread_pool>(1);
  accept();
  thread_ = std::thread([this] { run_io(); });
}

// Runs io_ until it has no more work, entering run() again after an
// exception a handler let out: exceptions do not end the event loop.
void HttpServer::run_io() {
  for (;;) {
    try {
      io_.run();
      return;
    } catch (const std::exception& e) {
      log_escaped(e);
    }
  }
}

void HttpServer::stop() {
  if (!thread_.joinable()) return;
  asio::post(io_, [this] {
    beast::error_code ec;
    acceptor_.close(ec);
    retry_.cancel();
    connections_.close_unstarted();
  });
  thread_.join();  // run() returns once the requests in progress are answered
  workers_->join();
  admin_->join();
}

void HttpServer::accept() {
  acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) { on_accept(ec, std::move(socket)); });
}

void HttpServer::on_accept(beast::error_code ec, tcp::socket socket) {
  if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
  if (ec) {  // out of fds (EMFILE) or the like: wait rather than spin
    log_.log(spdlog::level::warn, "HTTP accept on {}: {}", endpoint(), ec.message());
    retry_.expires_after(std::chrono::milliseconds(100));
    retry_.async_wait([this](beast::error_code wait_ec) {
      if (!wait_ec) accept();
    });
    return;
  }
  accept();  // first: armed again whatever the session below does
  HttpRoutes& routes = *this;
  auto session = std::make_shared<HttpSession>(std::move(socket), routes, connections_, config_.deadlines, *view_.http);
  if (std::uint64_t id = connections_.admit(session)) {
    session->start(id);
  } else {
    session->close();
  }
}

std::optional<HttpResponse> HttpServer::on_head(const http::request_header<>& head, const std::string& peer,
                                                std::size_t* limit) {
  std::string path = path_of(sv(head.target()));
  if (auto refused = refuse(head, path, peer)) return refused;
  const Route* r = route_of(path);
  if (!r) return json_reply(http::status::not_found, {{"error", "no such path " + path}});
  if (head.method() != r->method) return method_not_allowed(*r, sv(head.method_string()));
  *limit = body_limit(sv(head.method_string()), path);
  return std::nullopt;
}

// Refusals from the head alone: a body the endpoint does not take (first:
// no body is read, no token compared), then a missing or wrong token.
std::optional<HttpResponse> HttpServer::refuse(const http::request_header<>& head, const std::string& path,
                                               const std::string& peer) {
  std::string method(sv(head.method_string()));
  auto length_it = head.find(http::field::content_length);
  std::string length = length_it == head.end() ? std::string() : std::string(sv(length_it->value()));
  auto refusal = refuse_body(method, path, length_it == head.end() ? nullptr : &length,
                             head.find(http::field::transfer_encoding) != head.end());
  if (refusal) {
    log_.log(spdlog::level::warn, "HTTP {} {} from {}: refused before reading its body: {}", method, path, peer,
             refusal->error);
    // A known path asked with another method is answered as it would be anyway (405).
    const Route* r = route_of(path);
    if (r && head.method() != r->method) return method_not_allowed(*r, method);
    return json_reply(static_cast<http::status>(refusal->status), {{"error", refusal->error}});
  }
  bool guarded = path == "/metrics" || path.rfind("/admin/", 0) == 0;
  if (config_.token.empty() || !guarded || bearer_matches(sv(head[http::field::authorization]), config_.token)) {
    return std::nullopt;
  }
  ++auth_failures_;
  if (view_.auth) view_.auth->count_failure("http");
  log_.log(spdlog::level::warn, "HTTP {} {} from {}: missing or wrong bearer token", method, path, peer);
  HttpResponse res = json_reply(http::status::unauthorized,
                                {{"error", "this path needs 'Authorization: Bearer TOKEN' (--http-token-file)"}});
  res.set(http::field::www_authenticate, "Bearer");
  return res;
}

// Runs fn (returning an HttpResponse) on pool and answers with its result;
// the io thread keeps running until it has.
template <typename Fn>
void HttpServer::run_on(asio::thread_pool& pool, std::shared_ptr<HttpSession> session, Fn fn) {
  asio::post(pool, [s = std::move(session), fn = std::move(fn), guard = asio::make_work_guard(io_)]() mutable {
    try {
      s->answer(fn());
    } catch (const std::exception& e) {
      spdlog::error("HTTP request from {}: {}", s->peer(), e.what());
      s->answer(json_reply(http::status::internal_server_error, {{"error", e.what()}}));
    }
  });
}

void HttpServer::on_request(HttpRequest request, std::shared_ptr<HttpSession> session) {
  std::string path = path_of(sv(request.target()));
  if (path == "/healthz") {
    return run_on(*workers_, std::move(session), [this] {
      Health h = check_health(view_, config_.stale_after);
      return http_json_response(h.healthy ? http::status::ok : http::status::service_unavailable, h.body);
    });
  }
  if (path == "/metrics") {
    return run_on(*workers_, std::move(session), [this] {
      HttpResponse res{http::status::ok, 11};
      res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
      res.body() = render_metrics(view_);
      return res;
    });
  }
  admin_checkpoint(request, std::move(session));  // on_head let only the three routes through
}

void HttpServer::admin_checkpoint(const HttpRequest& request, std::shared_ptr<HttpSession> session) {
  auto dir = form_value(query_of(sv(request.target())), "dir");
  if (!dir && sv(request[http::field::content_type]).starts_with("application/x-www-form-urlencoded")) {
    dir = form_value(request.body(), "dir");
  }
  if (!dir) {
    return session->answer(
        json_reply(http::status::bad_request, {{"error", "missing parameter dir (a new subdirectory name)"}}));
  }
  std::string error;
  auto target = backup_target(config_.backup_dir, *dir, &error);
  if (!target) {
    auto status = config_.backup_dir.empty() ? http::status::forbidden : http::status::bad_request;
    return session->answer(json_reply(status, {{"error", error}}));
  }
  run_on(*admin_, std::move(session), [this, t = *target] { return checkpoint(t); });
}

HttpResponse HttpServer::checkpoint(const std::string& dir) {
  auto started = std::chrono::steady_clock::now();
  CheckpointResult r = write_checkpoint(*view_.db, dir);
  http::status status = http::status::created;
  switch (r.error) {
    case CheckpointError::kNone:
      break;
    case CheckpointError::kBadTarget:
      status = http::status::bad_request;
      break;
    case CheckpointError::kExists:
      status = http::status::conflict;
      break;
    case CheckpointError::kFailed:
      status = http::status::internal_server_error;
      break;
  }
  if (r.error != CheckpointError::kNone) {
    spdlog::warn("admin checkpoint refused: {}", r.message);
    return json_reply(status, {{"error", r.message}});
  }
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  spdlog::info("admin checkpoint written to {} in {} ms", r.message, ms.count());
  return json_reply(status, {{"checkpoint", r.message}, {"milliseconds", ms.count()}});
}

}  // namespace zstore::server
