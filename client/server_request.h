// ServerRequest: a DEALER of its own to one server's snapshot port, with
// its security handshake watched, that a one-shot request (a snapshot, a
// confirmed write) sends on and reads the replies from until a deadline.
// Not thread-safe: one caller's, on its thread; closed on destruction.
#pragma once

#include <chrono>
#include <string>

#include <zmq.hpp>

#include "protocol/frames.h"
#include "security/curve_socket.h"
#include "security/watched_socket.h"
#include "transport/zmq_frames.h"

namespace zstore::client {

using RequestClock = std::chrono::steady_clock;

// The time left until t, never negative.
std::chrono::milliseconds time_until(RequestClock::time_point t);

class ServerRequest {
 public:
  // Connects to snapshot_endpoint ("tcp://host:P") with security's client side.
  ServerRequest(zmq::context_t& ctx, const security::SocketSecurity& security, const std::string& snapshot_endpoint);

  void send(const protocol::Frames& frames);

  enum class Received : std::uint8_t { kMessage, kSilent, kHandshakeFailed };
  // Waits for the next reply until `until`: kMessage (in *msg), kSilent
  // (nothing by then) or kHandshakeFailed (*why says how).
  Received receive(RequestClock::time_point until, transport::Message* msg, std::string* why);

 private:
  security::WatchedSocket dealer_;
};

}  // namespace zstore::client
