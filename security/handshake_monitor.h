// HandshakeMonitor: what became of one socket's ZeroMQ handshakes (CURVE or
// plain), read from a libzmq 4.3 socket monitor: a refused key (ZAP status
// 400), a mechanism mismatch, or a connection the server dropped mid-
// handshake (what a wrong server key looks like to a CURVE client). Create it
// on the socket's thread before the socket connects; afterwards only that
// thread may call poll(). Not copied or moved; the monitored socket must
// outlive it (destroy the monitor first: it detaches from the socket).
#pragma once

#include <cstdint>
#include <string>

#include <zmq.hpp>

namespace zstore::security {

class HandshakeMonitor {
 public:
  HandshakeMonitor(zmq::context_t& ctx, zmq::socket_t& socket);
  ~HandshakeMonitor();
  HandshakeMonitor(const HandshakeMonitor&) = delete;
  HandshakeMonitor& operator=(const HandshakeMonitor&) = delete;

  // The monitor's own socket, for a zmq::poll set (readable: events wait).
  zmq::socket_t& events() { return events_; }
  // Reads the waiting events without blocking.
  void poll();

  // Why the latest handshake failed, naming the endpoint and the likely
  // cause; empty when none failed since the last one that succeeded.
  const std::string& failure() const { return failure_; }
  std::uint64_t failures() const { return failures_; }
  std::uint64_t successes() const { return successes_; }

 private:
  void on_event(std::uint16_t event, std::uint32_t value, const std::string& endpoint);

  zmq::socket_t* socket_;
  zmq::socket_t events_;
  std::string failure_;
  std::uint64_t failures_ = 0;
  std::uint64_t successes_ = 0;
};

// The text for a failed handshake event (ZMQ_EVENT_HANDSHAKE_FAILED_*) with
// its value, at endpoint.
std::string describe_handshake_failure(std::uint16_t event, std::uint32_t value, const std::string& endpoint);

}  // namespace zstore::security
