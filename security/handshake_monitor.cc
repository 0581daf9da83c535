#include "security/handshake_monitor.h"

#include <atomic>
#include <cstring>

namespace zstore::security {
namespace {

constexpr int kEvents = ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                        ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_SUCCEEDED;

std::string monitor_endpoint() {
  static std::atomic<std::uint64_t> next{0};
  return "inproc://zstore-handshake-monitor-" + std::to_string(next.fetch_add(1));
}

std::string protocol_error(std::uint32_t code) {
  switch (code) {
    case ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH:
      return "the server and we use different security mechanisms (one has CURVE on, the other not)";
    case ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC:
      return "a CURVE message did not decrypt (a wrong key)";
    case ZMQ_PROTOCOL_ERROR_ZAP_UNSPECIFIED:
    case ZMQ_PROTOCOL_ERROR_ZAP_MALFORMED_REPLY:
    case ZMQ_PROTOCOL_ERROR_ZAP_BAD_REQUEST_ID:
    case ZMQ_PROTOCOL_ERROR_ZAP_BAD_VERSION:
    case ZMQ_PROTOCOL_ERROR_ZAP_INVALID_STATUS_CODE:
    case ZMQ_PROTOCOL_ERROR_ZAP_INVALID_METADATA:
      return "the server's authentication handler misbehaved";
    default:
      return "a protocol error (ZeroMQ code " + std::to_string(code) + ")";
  }
}

}  // namespace

std::string describe_handshake_failure(std::uint16_t event, std::uint32_t value, const std::string& endpoint) {
  std::string at = "handshake with " + endpoint + " failed: ";
  switch (event) {
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
      return at + "the server refused our key (authentication status " + std::to_string(value) +
             "; is our public key in its --curve-allow directory?)";
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
      return at + protocol_error(value);
    default:
      return at + "the server closed the connection (with CURVE: the server key is not the server's, or the "
                  "server does not use CURVE; " + std::strerror(static_cast<int>(value)) + ")";
  }
}

HandshakeMonitor::HandshakeMonitor(zmq::context_t& ctx, zmq::socket_t& socket) : socket_(&socket) {
  std::string endpoint = monitor_endpoint();
  if (zmq_socket_monitor(socket.handle(), endpoint.c_str(), kEvents) != 0) throw zmq::error_t();
  events_ = zmq::socket_t(ctx, zmq::socket_type::pair);
  events_.set(zmq::sockopt::linger, 0);
  events_.connect(endpoint);
}

HandshakeMonitor::~HandshakeMonitor() {
  if (socket_->handle() != nullptr) zmq_socket_monitor(socket_->handle(), nullptr, 0);
  events_.close();
}

void HandshakeMonitor::poll() {
  for (int i = 0; i < 1024; ++i) {
    zmq::message_t head, address;
    if (!events_.recv(head, zmq::recv_flags::dontwait)) return;
    if (!head.more() || !events_.recv(address, zmq::recv_flags::none)) continue;
    if (head.size() < 6) continue;
    std::uint16_t event;
    std::uint32_t value;
    std::memcpy(&event, head.data(), sizeof event);
    std::memcpy(&value, static_cast<const char*>(head.data()) + 2, sizeof value);
    on_event(event, value, address.to_string());
  }
}

void HandshakeMonitor::on_event(std::uint16_t event, std::uint32_t value, const std::string& endpoint) {
  if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
    ++successes_;
    failure_.clear();
    return;
  }
  ++failures_;
  failure_ = describe_handshake_failure(event, value, endpoint);
}

}  // namespace zstore::security
