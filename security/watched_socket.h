// WatchedSocket: a ZeroMQ socket and the HandshakeMonitor watching it,
// closed in the one safe order. libzmq sends monitor events from its I/O
// thread with a blocking send; an event of a socket whose monitor reader is
// already closed (a closed socket is torn down later, in the background, and
// may still connect, shake hands or disconnect meanwhile) blocks that thread
// for ever, and every socket of the context with it. close() therefore stops
// the monitor first, then closes the socket, then the reader. Not
// thread-safe: use it on the socket's thread.
#pragma once

#include <optional>

#include <zmq.hpp>

#include "security/handshake_monitor.h"

namespace zstore::security {

class WatchedSocket {
 public:
  WatchedSocket() = default;  // closed
  // socket: its options set, not yet connected or bound.
  WatchedSocket(zmq::context_t& ctx, zmq::socket_t socket, bool curve_client);
  ~WatchedSocket() { close(); }
  WatchedSocket(WatchedSocket&& other) noexcept = default;
  WatchedSocket& operator=(WatchedSocket&& other) noexcept;  // closes this one first
  WatchedSocket(const WatchedSocket&) = delete;
  WatchedSocket& operator=(const WatchedSocket&) = delete;

  explicit operator bool() const { return static_cast<bool>(socket_); }
  zmq::socket_t& socket() { return socket_; }
  HandshakeMonitor& monitor() { return *monitor_; }
  void close();

 private:
  zmq::socket_t socket_;
  std::optional<HandshakeMonitor> monitor_;
};

}  // namespace zstore::security
