// BoundEndpoint: the endpoint a socket is bound to, able to end every
// connection made to it. Unbinding ends the sessions its listener accepted
// (libzmq); binding the same endpoint again lets the clients reconnect,
// which they do by themselves, and, with CURVE, authenticate again under
// the allow list and rules in force. The bind can fail for a moment while
// the I/O thread closes the old listener, or until another process that
// took the port lets it go: the owner's loop calls retry() every few
// milliseconds while unbound(). Failures are logged (rate-limited) once
// the port has stayed unbound for kQuietRetry, not the usual brief ones.
#pragma once

#include <chrono>
#include <string>

#include <zmq.hpp>

#include "server/log.h"

namespace zstore::server {

class BoundEndpoint {
 public:
  static constexpr std::chrono::milliseconds kQuietRetry{100};

  BoundEndpoint() = default;
  // After socket->bind(): the endpoint as bound (a port 0 resolved). what
  // names the socket in log lines ("CHP publisher").
  BoundEndpoint(zmq::socket_t* socket, std::string what);

  // Unbinds (every connection ends) and binds again, now or in retry().
  void drop_connections();
  // Binds again if unbound; true once bound.
  bool retry();
  bool unbound() const { return unbound_; }
  const std::string& endpoint() const { return endpoint_; }

 private:
  zmq::socket_t* socket_ = nullptr;
  std::string what_;
  std::string endpoint_;
  bool unbound_ = false;
  std::chrono::steady_clock::time_point unbound_at_{};
  RateLimiter bind_log_;
};

}  // namespace zstore::server
