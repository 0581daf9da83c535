// Tower discovery codec (specs/DAFKA-WIRE.md, "Tower and beacons").
//
// Wire forms, every field a frame of ASCII text:
//   node beacon   node PUB -> tower XSUB   "B" | uuid | host | port
//                 (older nodes send "B" | uuid | port; host is then empty)
//   tower beacon  tower XPUB -> nodes      "B" | uuid | "tcp://host:port"
//   welcome       tower XPUB -> new node   "W"
// Ports are decimal, 1..65535. uuid, host and endpoint are at most 255 bytes.
//
// zstore extension for CURVE (docs/dafka-curve.md): a node whose publisher is
// a CURVE server appends its public key, 40 Z85 characters, as one more
// frame: "B" | uuid | host | port | key, and the tower forwards it as
// "B" | uuid | "tcp://host:port" | key. Without a key both forms are
// byte-identical to the reference ones (reference nodes never see a key:
// they cannot join a CURVE tower).
//
// Encoding a beacon that decode would refuse (empty uuid, port 0, a field
// over 255 bytes, an endpoint not of the form above) is a programming error
// and throws std::invalid_argument. Decoders never throw: malformed input
// yields a DecodeError naming the frame at fault.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "protocol/decode_result.h"
#include "protocol/frames.h"

namespace zstore::protocol::beacon {

inline constexpr std::string_view kBeacon = "B";
inline constexpr std::string_view kWelcome = "W";
inline constexpr std::size_t kMaxFieldBytes = 255;

// What a node announces: its uuid and where its publisher can be reached.
// An empty host asks the tower to use the connection's peer address.
struct NodeBeacon {
  NodeBeacon() = default;
  NodeBeacon(std::string uuid_, std::string host_, std::uint16_t port_, std::string key_ = {})
      : uuid(std::move(uuid_)), host(std::move(host_)), port(port_), key(std::move(key_)) {}
  std::string uuid;
  std::string host;
  std::uint16_t port = 0;
  std::string key;  // Z85 public key of the publisher (CURVE), or empty
  bool operator==(const NodeBeacon&) const = default;
};

// What the tower forwards to every node: a peer's uuid and its publisher
// endpoint, "tcp://host:port".
struct TowerBeacon {
  TowerBeacon() = default;
  TowerBeacon(std::string uuid_, std::string endpoint_, std::string key_ = {})
      : uuid(std::move(uuid_)), endpoint(std::move(endpoint_)), key(std::move(key_)) {}
  std::string uuid;
  std::string endpoint;
  std::string key;  // as NodeBeacon::key
  bool operator==(const TowerBeacon&) const = default;
};

Frames encode(const NodeBeacon& beacon);   // 4 frames, 5 with a key
Frames encode(const TowerBeacon& beacon);  // 3 frames, 4 with a key
Frames encode_welcome();                   // 1 frame: "W"

// Accepts the 4-frame form, the older 3-frame form (host left empty) and the
// 5-frame form with a key. Errors: kFrameCount, kUnknownId (frame 0 is not
// "B"), kBadField (empty uuid, port not decimal or out of 1..65535, a key
// that is not 40 Z85 characters), kTooLarge (field > 255 bytes).
DecodeResult<NodeBeacon> decode_node_beacon(FrameViews frames);

// Errors as decode_node_beacon, plus kBadField for an endpoint that is not
// "tcp://host:port" with a non-empty host and a valid port. A 4th frame is
// the key.
DecodeResult<TowerBeacon> decode_tower_beacon(FrameViews frames);

// Whether `key` is a Z85-encoded 32-byte key: 40 characters of the Z85 set.
bool is_z85_key(std::string_view key);

// True for the tower's one-frame welcome message "W".
bool is_welcome(FrameViews frames);

// "tcp://host:port"; a host containing ':' (IPv6) is put in brackets unless
// it already is.
std::string tower_endpoint(std::string_view host, std::uint16_t port);

}  // namespace zstore::protocol::beacon
