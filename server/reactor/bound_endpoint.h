// BoundEndpoint: the endpoint a socket is bound to, able to end every
// connection made to it. Unbinding ends the sessions its listener accepted
// (libzmq); binding the same endpoint again lets the clients reconnect,
// which they do by themselves, and, with CURVE, authenticate again under
// the allow list and rules in force. The owner's loop binds it again with
// retry(), every few milliseconds while unbound(): the bind fails while
// the I/O thread closes the old listener, and for as long as another
// process that took the port meanwhile keeps it. Failures are logged
// (rate-limited) once the port has stayed unbound for kQuietRetry, not the
// usual brief ones; a gauge counts the unbound ports (/metrics, /healthz).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include <zmq.hpp>

#include "server/reactor/log.h"

namespace zstore::server {

class BoundEndpoint {
 public:
  static constexpr std::chrono::milliseconds kQuietRetry{100};

  BoundEndpoint() = default;
  // After socket->bind(): the endpoint as bound (a port 0 resolved). what
  // names the socket in log lines ("CHP publisher"); unbound_ports, if not
  // null, is counted up while this endpoint is unbound (it must outlive
  // this object).
  BoundEndpoint(zmq::socket_t* socket, std::string what, std::atomic<std::int64_t>* unbound_ports = nullptr);
  ~BoundEndpoint();
  BoundEndpoint(BoundEndpoint&& other) noexcept;
  BoundEndpoint& operator=(BoundEndpoint&& other) noexcept;

  // Unbinds: every connection ends. retry() binds it again.
  void drop_connections();
  // Binds again if unbound; true once bound.
  bool retry();
  bool unbound() const { return unbound_; }
  const std::string& endpoint() const { return endpoint_; }

 private:
  zmq::socket_t* socket_ = nullptr;
  std::string what_;
  std::string endpoint_;
  std::atomic<std::int64_t>* unbound_ports_ = nullptr;
  bool unbound_ = false;
  std::chrono::steady_clock::time_point unbound_at_{};
  RateLimiter bind_log_;
};

}  // namespace zstore::server
