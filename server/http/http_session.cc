#include "server/http/http_session.h"

#include <boost/asio/post.hpp>

#include <nlohmann/json.hpp>

#include <limits>
#include <utility>

#include "server/http/http_connections.h"
#include "server/http/http_limits.h"

namespace zstore::server {

namespace beast = boost::beast;
namespace http = beast::http;

namespace {

// The buffer holds the head and what follows it in the same reads: the
// head's limit and the largest body (http_limits.h), with room to spare.
constexpr std::size_t kBufferBytes = 2 * (kMaxHeadBytes + kMaxFormBytes);

std::string peer_of(const boost::asio::ip::tcp::socket& socket) {
  beast::error_code ec;
  auto ep = socket.remote_endpoint(ec);
  return ec ? std::string("unknown") : ep.address().to_string();
}

}  // namespace

HttpResponse http_json_response(http::status status, std::string json_text) {
  HttpResponse res{status, 11};
  res.set(http::field::content_type, "application/json");
  res.body() = std::move(json_text);
  return res;
}

HttpSession::HttpSession(boost::asio::ip::tcp::socket socket, HttpRoutes& routes, HttpConnections& connections,
                         const HttpDeadlines& deadlines, HttpMetrics& metrics)
    : stream_(std::move(socket)),
      routes_(routes),
      connections_(connections),
      deadlines_(deadlines),
      metrics_(metrics),
      peer_(peer_of(stream_.socket())),
      buffer_(kBufferBytes) {}

void HttpSession::start(std::uint64_t id) {
  id_ = id;
  head_parser_.emplace();
  head_parser_->header_limit(static_cast<std::uint32_t>(kMaxHeadBytes));
  // The body's length is judged by the routes (http_limits.h), not here;
  // an unlimited parser would refuse any length (Boost 1.74 compares it to none).
  head_parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
  stream_.expires_after(deadlines_.head);
  http::async_read_header(stream_, buffer_, *head_parser_,
                          [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_head(ec); });
}

void HttpSession::on_head(beast::error_code ec) {
  if (ec == beast::error::timeout) ++metrics_.timed_out;
  if (ec == http::error::header_limit) {
    return reply_error(http::status::request_header_fields_too_large,
                       "the request head is larger than " + std::to_string(kMaxHeadBytes) + " bytes");
  }
  if (ec && ec.category() == beast::error_code(http::error::bad_target).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message) {
    return reply_error(http::status::bad_request, "malformed request: " + ec.message());
  }
  if (ec) return finish();
  head_done_ = true;
  std::size_t limit = 0;
  if (auto refusal = routes_.on_head(head_parser_->get(), peer_, &limit)) return write(std::move(*refusal));
  read_body(limit);
}

void HttpSession::read_body(std::size_t limit) {
  bool expects_continue = beast::iequals(head_parser_->get()[http::field::expect], "100-continue");
  body_parser_.emplace(std::move(*head_parser_));
  head_parser_.reset();
  if (body_parser_->is_done()) return deliver();
  body_parser_->body_limit(limit);
  stream_.expires_after(deadlines_.body);
  auto read = [self = shared_from_this()] {
    http::async_read(self->stream_, self->buffer_, *self->body_parser_,
                     [self](beast::error_code ec, std::size_t) { self->on_body(ec); });
  };
  if (!expects_continue) return read();
  continue_.emplace(http::status::continue_, 11);
  http::async_write(stream_, *continue_, [self = shared_from_this(), read](beast::error_code ec, std::size_t) {
    if (ec) return self->finish();
    read();
  });
}

void HttpSession::on_body(beast::error_code ec) {
  if (ec == beast::error::timeout) ++metrics_.timed_out;
  if (ec) return finish();
  deliver();
}

void HttpSession::deliver() {
  received_ = true;
  stream_.expires_never();  // the handler may take its time; the write has its own deadline
  routes_.on_request(body_parser_->release(), shared_from_this());
}

void HttpSession::answer(HttpResponse response) {
  boost::asio::post(stream_.get_executor(),
                    [self = shared_from_this(), r = std::move(response)]() mutable { self->write(std::move(r)); });
}

void HttpSession::reply_error(http::status status, const std::string& error) {
  write(http_json_response(status, nlohmann::json{{"error", error}}.dump() + "\n"));
}

void HttpSession::write(HttpResponse response) {
  if (finished_) return;
  head_done_ = true;
  received_ = true;  // or refused from its head: either way it is being answered
  response_ = std::move(response);
  response_.keep_alive(false);
  response_.prepare_payload();
  stream_.expires_after(deadlines_.write);
  http::async_write(stream_, response_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
    if (ec == beast::error::timeout) ++self->metrics_.timed_out;
    self->finish();
  });
}

void HttpSession::close() {
  beast::error_code ec;
  stream_.socket().close(ec);
}

void HttpSession::finish() {
  if (finished_) return;
  finished_ = true;
  beast::error_code ec;
  stream_.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ec);
  stream_.close();
  connections_.remove(id_);
}

}  // namespace zstore::server
