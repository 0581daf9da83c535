#include "protocol/beacon.h"

#include <optional>
#include <stdexcept>

#include "protocol/endpoint.h"

namespace zstore::protocol::beacon {
namespace {

using K = DecodeErrorKind;

// For details: a field cut to a loggable size.
std::string quoted(std::string_view text) {
  constexpr std::size_t kShown = 32;
  std::string out = "'" + std::string(text.substr(0, kShown));
  if (text.size() > kShown) out += "...";
  return out + "'";
}

std::optional<DecodeError> check_length(std::string_view value, std::string_view what) {
  if (value.size() > kMaxFieldBytes) {
    return decode_error(K::kTooLarge,
                        std::string(what) + " is " + std::to_string(value.size()) + " bytes, at most 255 allowed");
  }
  return std::nullopt;
}

std::optional<DecodeError> check_non_empty(std::string_view value, std::string_view what) {
  if (value.empty()) return decode_error(K::kBadField, std::string(what) + " is empty");
  return check_length(value, what);
}

std::optional<DecodeError> check_header(FrameViews frames, std::string_view what) {
  if (frames.empty()) return decode_error(K::kFrameCount, std::string(what) + " with no frames");
  if (frames[0] != kBeacon) {
    return decode_error(K::kUnknownId, std::string(what) + ": frame 0 is " + quoted(frames[0]) + ", not 'B'");
  }
  return std::nullopt;
}

// Why `endpoint` is not "tcp://host:port", or nullopt when it is.
std::optional<std::string> endpoint_problem(std::string_view endpoint) {
  if (parse_tcp_endpoint(endpoint)) return std::nullopt;
  return "endpoint " + quoted(endpoint) + " is not tcp://host:port with a port in 1..65535";
}

// Why `key` cannot be a beacon's key, or nullopt when it can.
std::optional<DecodeError> check_key(std::string_view key, std::string_view what) {
  if (is_z85_key(key)) return std::nullopt;
  return decode_error(K::kBadField, std::string(what) + " key " + quoted(key) + " is not 40 Z85 characters");
}

}  // namespace

bool is_z85_key(std::string_view key) {
  static constexpr std::string_view kZ85 =
      "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
  return key.size() == 40 && key.find_first_not_of(kZ85) == std::string_view::npos;
}

Frames encode(const NodeBeacon& beacon) {
  if (beacon.uuid.empty() || beacon.uuid.size() > kMaxFieldBytes) {
    throw std::invalid_argument("node beacon: uuid must be 1..255 bytes");
  }
  if (beacon.host.size() > kMaxFieldBytes) throw std::invalid_argument("node beacon: host over 255 bytes");
  if (beacon.port == 0) throw std::invalid_argument("node beacon: port 0");
  if (!beacon.key.empty() && !is_z85_key(beacon.key)) throw std::invalid_argument("node beacon: key is not Z85");
  Frames out{std::string(kBeacon), beacon.uuid, beacon.host, std::to_string(beacon.port)};
  if (!beacon.key.empty()) out.push_back(beacon.key);
  return out;
}

Frames encode(const TowerBeacon& beacon) {
  if (beacon.uuid.empty() || beacon.uuid.size() > kMaxFieldBytes) {
    throw std::invalid_argument("tower beacon: uuid must be 1..255 bytes");
  }
  if (beacon.endpoint.size() > kMaxFieldBytes) throw std::invalid_argument("tower beacon: endpoint over 255 bytes");
  if (auto problem = endpoint_problem(beacon.endpoint)) throw std::invalid_argument("tower beacon: " + *problem);
  if (!beacon.key.empty() && !is_z85_key(beacon.key)) throw std::invalid_argument("tower beacon: key is not Z85");
  Frames out{std::string(kBeacon), beacon.uuid, beacon.endpoint};
  if (!beacon.key.empty()) out.push_back(beacon.key);
  return out;
}

Frames encode_welcome() { return {std::string(kWelcome)}; }

DecodeResult<NodeBeacon> decode_node_beacon(FrameViews frames) {
  if (auto e = check_header(frames, "node beacon")) return *e;
  if (frames.size() < 3 || frames.size() > 5) {
    return decode_error(K::kFrameCount, "node beacon: expected 4 frames (3 without host, 5 with a key), got " +
                                            std::to_string(frames.size()));
  }
  const bool has_host = frames.size() >= 4;
  const bool has_key = frames.size() == 5;
  const std::string_view uuid = frames[1];
  const std::string_view host = has_host ? frames[2] : std::string_view();
  const std::string_view port_text = frames[has_host ? 3 : 2];
  if (has_key) {
    if (auto e = check_key(frames[4], "node beacon:")) return *e;
  }
  if (auto e = check_non_empty(uuid, "node beacon: uuid")) return *e;
  if (auto e = check_length(host, "node beacon: host")) return *e;
  if (auto e = check_non_empty(port_text, "node beacon: port")) return *e;
  auto port = parse_port(port_text);
  if (!port) {
    return decode_error(K::kBadField, "node beacon: port " + quoted(port_text) + " is not a decimal in 1..65535");
  }
  return NodeBeacon{std::string(uuid), std::string(host), *port, has_key ? std::string(frames[4]) : std::string()};
}

DecodeResult<TowerBeacon> decode_tower_beacon(FrameViews frames) {
  if (auto e = check_header(frames, "tower beacon")) return *e;
  if (frames.size() != 3 && frames.size() != 4) {
    return decode_error(K::kFrameCount,
                        "tower beacon: expected 3 frames (4 with a key), got " + std::to_string(frames.size()));
  }
  const bool has_key = frames.size() == 4;
  if (has_key) {
    if (auto e = check_key(frames[3], "tower beacon:")) return *e;
  }
  if (auto e = check_non_empty(frames[1], "tower beacon: uuid")) return *e;
  if (auto e = check_non_empty(frames[2], "tower beacon: endpoint")) return *e;
  if (auto problem = endpoint_problem(frames[2])) return decode_error(K::kBadField, "tower beacon: " + *problem);
  return TowerBeacon{std::string(frames[1]), std::string(frames[2]), has_key ? std::string(frames[3]) : std::string()};
}

bool is_welcome(FrameViews frames) { return frames.size() == 1 && frames[0] == kWelcome; }

std::string tower_endpoint(std::string_view host, std::uint16_t port) { return tcp_endpoint(host, port); }

}  // namespace zstore::protocol::beacon
