#include "security/handshake_monitor.h"

#include <atomic>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include <zmq.hpp>
#include <zmq_addon.hpp>

namespace zstore::security {

namespace {

constexpr int kEvents = ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_SUCCEEDED |
                        ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                        ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;

std::string next_address() {
  static std::atomic<std::uint64_t> counter{0};
  return "inproc://zstore-handshake-monitor-" + std::to_string(counter.fetch_add(1));
}

std::string hex(std::uint32_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out = "0x";
  for (int shift = 28; shift >= 0; shift -= 4) out += kDigits[(value >> shift) & 0xf];
  return out;
}

// A protocol error's problem and detail.
std::pair<HandshakeProblem, std::string> protocol_problem(std::uint32_t code) {
  switch (code) {
    case ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH:
      return {HandshakeProblem::kMechanismMismatch, ""};
    case ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC:
      return {HandshakeProblem::kServerKeyMismatch, "cryptographic error"};
    default:
      return {HandshakeProblem::kOther, "protocol error " + hex(code)};
  }
}

std::pair<HandshakeProblem, std::string> auth_problem(std::uint32_t status) {
  if (status == 400) return {HandshakeProblem::kKeyRefused, ""};
  return {HandshakeProblem::kOther, "authentication failed, ZAP status " + std::to_string(status)};
}

}  // namespace

std::string describe(HandshakeProblem problem, const std::string& endpoint, const std::string& detail) {
  std::string text = "CURVE handshake with " + endpoint + ": ";
  switch (problem) {
    case HandshakeProblem::kKeyRefused:
      text += "the server refused our key (not in its allow list)";
      break;
    case HandshakeProblem::kServerKeyMismatch:
      // Also what a CURVE client sees of a plain server that hung up
      // before its greeting was read (TCP reset): say both.
      text += "server key mismatch (the server hung up on our hello: the server key we hold is not its ";
      text += "public key, or the server does not use CURVE)";
      break;
    case HandshakeProblem::kMechanismMismatch:
      text += "security mechanism mismatch (one side uses CURVE, the other does not)";
      break;
    case HandshakeProblem::kOther:
      text += "failed";
      break;
  }
  if (!detail.empty()) text += " (" + detail + ")";
  return text;
}

struct HandshakeMonitor::State {
  zmq::socket_t events;
  void* watched = nullptr;  // the monitored socket, until stop()
  bool curve_client = false;
  bool succeeded = false;
  std::map<std::string, bool> handshaking;  // endpoint -> connected, handshake not yet done

  std::optional<HandshakeFailure> on_event(std::uint16_t event, std::uint32_t value, const std::string& endpoint);
};

std::optional<HandshakeFailure> HandshakeMonitor::State::on_event(std::uint16_t event, std::uint32_t value,
                                                                  const std::string& endpoint) {
  auto failure = [&endpoint](std::pair<HandshakeProblem, std::string> p) {
    return HandshakeFailure{p.first, endpoint, describe(p.first, endpoint, p.second)};
  };
  switch (event) {
    case ZMQ_EVENT_CONNECTED:
      handshaking[endpoint] = true;
      return std::nullopt;
    case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
      succeeded = true;
      handshaking.erase(endpoint);
      return std::nullopt;
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
      handshaking.erase(endpoint);
      return failure(auth_problem(value));
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
      handshaking.erase(endpoint);
      return failure(protocol_problem(value));
    case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
    case ZMQ_EVENT_DISCONNECTED: {
      // libzmq reports a peer that hangs up mid-handshake as NO_DETAIL (the
      // value is an errno). A CURVE server does so when our HELLO does not
      // decrypt with its secret key: the key we were given is not its own.
      // To a plain client, only a server that wants CURVE hangs up so
      // (a NULL handshake has nothing else to fail on short of a ZAP reply,
      // which comes as an ERROR: HANDSHAKE_FAILED_AUTH).
      const bool midway = handshaking.erase(endpoint) > 0 || event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
      if (!midway) return std::nullopt;
      if (curve_client) return failure({HandshakeProblem::kServerKeyMismatch, ""});
      return failure({HandshakeProblem::kMechanismMismatch, "the server closed the connection during the handshake"});
    }
    default:
      return std::nullopt;
  }
}

HandshakeMonitor::HandshakeMonitor(zmq::context_t& ctx, zmq::socket_t& socket, bool curve_client)
    : state_(std::make_unique<State>()) {
  const std::string address = next_address();
  if (zmq_socket_monitor(socket.handle(), address.c_str(), kEvents) != 0) throw zmq::error_t();
  state_->events = zmq::socket_t(ctx, zmq::socket_type::pair);
  state_->events.set(zmq::sockopt::linger, 0);
  state_->events.connect(address);
  state_->watched = socket.handle();
  state_->curve_client = curve_client;
}

HandshakeMonitor::~HandshakeMonitor() = default;
HandshakeMonitor::HandshakeMonitor(HandshakeMonitor&&) noexcept = default;
HandshakeMonitor& HandshakeMonitor::operator=(HandshakeMonitor&&) noexcept = default;

zmq::socket_t& HandshakeMonitor::events() { return state_->events; }

bool HandshakeMonitor::succeeded() const { return state_->succeeded; }

void HandshakeMonitor::stop() {
  if (state_ == nullptr || state_->watched == nullptr) return;
  (void)zmq_socket_monitor(state_->watched, nullptr, 0);
  state_->watched = nullptr;
}

std::optional<HandshakeFailure> HandshakeMonitor::poll() {
  std::optional<HandshakeFailure> last;
  while (true) {
    std::vector<zmq::message_t> parts;
    if (!zmq::recv_multipart(state_->events, std::back_inserter(parts), zmq::recv_flags::dontwait)) return last;
    if (parts.size() < 2 || parts[0].size() < 6) continue;
    std::uint16_t event = 0;
    std::uint32_t value = 0;
    std::memcpy(&event, parts[0].data(), sizeof event);
    std::memcpy(&value, static_cast<const char*>(parts[0].data()) + 2, sizeof value);
    if (auto f = state_->on_event(event, value, parts[1].to_string())) last = std::move(f);
  }
}

}  // namespace zstore::security
