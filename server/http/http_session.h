// HttpSession: one HTTP connection of an HttpServer, on its io thread. It
// reads one request head (at most kMaxHeadBytes) within the head deadline,
// counted from accept; asks its HttpRoutes whether to answer from the head
// alone or to read a body (up to the limit the routes give, within the body
// deadline); hands the request over; writes the answer within the write
// deadline; and closes: one request per connection. Every member runs on
// the io thread except answer(), which any thread may call once.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "server/http/http_metrics.h"

namespace zstore::server {

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;
using HttpResponse = boost::beast::http::response<boost::beast::http::string_body>;

struct HttpDeadlines {
  std::chrono::milliseconds head{2000};   // accept to the end of the request head
  std::chrono::milliseconds body{2000};   // the end of the head to the end of the body
  std::chrono::milliseconds write{5000};  // writing the answer
};

class HttpSession;
class HttpConnections;

// What a session asks of its server. Called on the io thread.
class HttpRoutes {
 public:
  virtual ~HttpRoutes() = default;
  // A request head arrived: the answer to send without reading its body, or
  // nullopt with *body_limit set, to read its body (Content-Length bytes).
  virtual std::optional<HttpResponse> on_head(const boost::beast::http::request_header<>& head, const std::string& peer,
                                              std::size_t* body_limit) = 0;
  // The whole request: its answer goes to session->answer(), now or later.
  virtual void on_request(HttpRequest request, std::shared_ptr<HttpSession> session) = 0;
};

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(boost::asio::ip::tcp::socket socket, HttpRoutes& routes, HttpConnections& connections,
              const HttpDeadlines& deadlines, HttpMetrics& metrics);

  // Starts reading the head; id is its place in connections (admit()).
  void start(std::uint64_t id);
  // Sends response, then closes. Thread-safe; call once per session.
  void answer(HttpResponse response);
  // Ends the connection now (eviction, stop): its pending read fails.
  void close();
  // Whether the whole request head has arrived (stop() closes sessions before it).
  bool head_done() const { return head_done_; }
  // Whether the whole request has (head and body: a session past it is not
  // evicted; it is being answered).
  bool received() const { return received_; }
  const std::string& peer() const { return peer_; }

 private:
  void on_head(boost::beast::error_code ec);
  void read_body(std::size_t limit);
  void on_body(boost::beast::error_code ec);
  void deliver();
  void write(HttpResponse response);
  void reply_error(boost::beast::http::status status, const std::string& error);
  void finish();

  boost::beast::tcp_stream stream_;
  HttpRoutes& routes_;
  HttpConnections& connections_;
  const HttpDeadlines deadlines_;
  HttpMetrics& metrics_;
  std::string peer_;
  std::uint64_t id_ = 0;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::empty_body>> head_parser_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> body_parser_;
  std::optional<boost::beast::http::response<boost::beast::http::empty_body>> continue_;
  HttpResponse response_;
  bool head_done_ = false;
  bool received_ = false;
  bool finished_ = false;
};

// A JSON answer {"error": error} (or any JSON text), closing the connection.
HttpResponse http_json_response(boost::beast::http::status status, std::string json_text);

}  // namespace zstore::server
