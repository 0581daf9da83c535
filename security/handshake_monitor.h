// HandshakeMonitor: tells why the connections of one ZeroMQ socket fail their
// security handshake (CURVE, rfc 26; ZAP, rfc 27), from libzmq's socket
// monitor events, as a sentence naming the endpoint. Attach it before
// connect(); it owns only its monitor socket and must not outlive the
// watched socket's context. Call stop() before the watched socket closes:
// WatchedSocket (watched_socket.h) does. Not thread-safe: use it on the
// socket's thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace zmq {
class context_t;
class socket_t;
}  // namespace zmq

namespace zstore::security {

enum class HandshakeProblem : std::uint8_t {
  kKeyRefused,         // the server's ZAP handler refused our key (not in its allow list)
  kServerKeyMismatch,  // the server hung up on our CURVE HELLO: the server key we hold is not its key
  kMechanismMismatch,  // one side speaks CURVE, the other plain (or a plain client was hung up on)
  kOther,              // another handshake failure (protocol error, ZAP error, ...)
};

struct HandshakeFailure {
  HandshakeProblem problem = HandshakeProblem::kOther;
  std::string endpoint;  // e.g. "tcp://127.0.0.1:5556"
  std::string message;   // "CURVE handshake with tcp://...: ..."
};

// The sentence for a problem: "CURVE handshake with ENDPOINT: ..." (detail
// is appended in parentheses when not empty).
std::string describe(HandshakeProblem problem, const std::string& endpoint, const std::string& detail);

class HandshakeMonitor {
 public:
  // Watches socket's connections. A connection the server closes before the
  // handshake completes is a failure too: with curve_client (the socket is a
  // CURVE client) the server could not read our HELLO (kServerKeyMismatch),
  // otherwise it wants a mechanism we do not speak (kMechanismMismatch).
  HandshakeMonitor(zmq::context_t& ctx, zmq::socket_t& socket, bool curve_client);
  ~HandshakeMonitor();
  HandshakeMonitor(HandshakeMonitor&&) noexcept;
  HandshakeMonitor& operator=(HandshakeMonitor&&) noexcept;
  HandshakeMonitor(const HandshakeMonitor&) = delete;
  HandshakeMonitor& operator=(const HandshakeMonitor&) = delete;

  // The monitor socket, for zmq_poll (ZMQ_POLLIN: events are waiting).
  zmq::socket_t& events();
  // Reads the waiting events without blocking; returns the last failure
  // among them, if any. A later successful handshake does not erase it.
  std::optional<HandshakeFailure> poll();
  // Whether some handshake of the socket completed (seen by poll()).
  bool succeeded() const;
  // Ends libzmq's monitoring of the socket: no event is sent after it.
  // Only while the watched socket is open (once is enough; later calls do
  // nothing).
  void stop();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace zstore::security
