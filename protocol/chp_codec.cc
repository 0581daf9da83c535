#include "protocol/chp_codec.h"

#include <charconv>

#include "protocol/byte_order.h"

namespace zstore::protocol::chp {
namespace {

using K = DecodeErrorKind;

DecodeError error(K kind, std::string detail) { return decode_error(kind, std::move(detail)); }

std::optional<DecodeError> check_frame_count(FrameViews frames, std::size_t want, std::string_view what) {
  if (frames.size() == want) return std::nullopt;
  return error(K::kFrameCount, std::string(what) + ": expected " + std::to_string(want) + " frames, got " +
                                   std::to_string(frames.size()));
}

DecodeResult<std::uint64_t> decode_sequence(std::string_view frame) {
  if (frame.size() != kSequenceSize) {
    return error(K::kBadField, "sequence frame must be 8 bytes, got " + std::to_string(frame.size()));
  }
  return get_be<std::uint64_t>(frame);
}

// Decodes the common 5-frame layout without command-specific checks.
DecodeResult<KvMsg> decode_kv_frames(FrameViews frames, const Limits& limits, std::string_view what) {
  if (auto e = check_frame_count(frames, kKvFrames, what)) return *e;
  auto seq = decode_sequence(frames[1]);
  if (!seq) return seq.error();
  if (!frames[2].empty() && frames[2].size() != kUuidSize) {
    return error(K::kBadField, "uuid frame must be empty or 16 bytes, got " + std::to_string(frames[2].size()));
  }
  if (frames[0].size() > limits.max_key_bytes) {
    return error(K::kTooLarge, "key of " + std::to_string(frames[0].size()) + " bytes exceeds limit");
  }
  if (frames[3].size() > limits.max_properties_bytes) {
    return error(K::kTooLarge, "properties of " + std::to_string(frames[3].size()) + " bytes exceed limit");
  }
  if (frames[4].size() > limits.max_value_bytes) {
    return error(K::kTooLarge, "value of " + std::to_string(frames[4].size()) + " bytes exceeds limit");
  }
  return KvMsg{std::string(frames[0]), *seq, std::string(frames[2]), std::string(frames[3]), std::string(frames[4])};
}

}  // namespace

DecodeResult<std::vector<Property>> parse_properties(std::string_view text) {
  std::vector<Property> out;
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    std::size_t eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return error(K::kBadField, "property line without name=value: '" + std::string(line.substr(0, 64)) + "'");
    }
    out.emplace_back(std::string(line.substr(0, eq)), std::string(line.substr(eq + 1)));
  }
  return out;
}

std::string format_properties(const std::vector<Property>& properties) {
  std::string out;
  for (const auto& [name, value] : properties) {
    out.append(name).push_back('=');
    out.append(value).push_back('\n');
  }
  return out;
}

std::string take_expires_at(std::string_view properties, std::uint64_t* expires_at_ms, std::uint64_t* written_ms) {
  *expires_at_ms = 0;
  if (written_ms) *written_ms = 0;
  auto parsed = parse_properties(properties);
  if (!parsed) return std::string(properties);
  std::vector<Property> kept;
  auto number = [](const std::string& v) {
    bool ok = !v.empty() && v.size() < 20 && v.find_first_not_of("0123456789") == std::string::npos;
    return ok ? std::stoull(v) : 0ull;
  };
  for (auto& [name, value] : *parsed) {
    if (name == kExpiresAtProperty) {
      *expires_at_ms = number(value);
    } else if (name == kWrittenAtProperty) {
      if (written_ms) *written_ms = number(value);
    } else {
      kept.emplace_back(name, value);
    }
  }
  return format_properties(kept);
}

DecodeResult<std::uint64_t> ttl_seconds(std::string_view properties, const Limits& limits) {
  auto parsed = parse_properties(properties);
  if (!parsed) return parsed.error();
  std::uint64_t ttl = 0;
  for (const auto& [name, value] : *parsed) {
    if (name != "ttl") continue;
    const char* first = value.data();
    const char* last = value.data() + value.size();
    auto [ptr, ec] = std::from_chars(first, last, ttl);
    if (value.empty() || ec != std::errc() || ptr != last) {
      return error(K::kBadField, "ttl is not a decimal number of seconds: '" + value.substr(0, 32) + "'");
    }
    if (ttl > limits.max_ttl_seconds) return error(K::kTooLarge, "ttl " + value + " exceeds limit");
  }
  return ttl;
}

bool is_reserved_key(std::string_view key) { return key == kHugz || key == kKthxbai || key == kIcanhaz; }

DecodeResult<Icanhaz> decode_icanhaz(FrameViews frames, const Limits& limits) {
  if (auto e = check_frame_count(frames, 2, "ICANHAZ?")) return *e;
  if (frames[0] != kIcanhaz) return error(K::kUnknownId, "snapshot request is not ICANHAZ?");
  if (frames[1].size() > limits.max_key_bytes) return error(K::kTooLarge, "subtree exceeds key size limit");
  return Icanhaz{std::string(frames[1])};
}

DecodeResult<KvMsg> decode_kvset(FrameViews frames, const Limits& limits) {
  auto msg = decode_kv_frames(frames, limits, "KVSET");
  if (!msg) return msg;
  if (msg->key.empty()) return error(K::kBadField, "KVSET with empty key");
  if (is_reserved_key(msg->key)) return error(K::kBadField, "KVSET of reserved key '" + msg->key + "'");
  auto ttl = ttl_seconds(msg->properties, limits);
  if (!ttl) return ttl.error();
  return msg;
}

DecodeResult<SnapshotReply> decode_snapshot_reply(FrameViews frames, const Limits& limits) {
  if (!frames.empty() && frames[0] == kKthxbai) {
    if (auto e = check_frame_count(frames, kKvFrames, "KTHXBAI")) return *e;
    auto seq = decode_sequence(frames[1]);
    if (!seq) return seq.error();
    if (frames[3].size() > limits.max_properties_bytes) return error(K::kTooLarge, "KTHXBAI properties too large");
    return SnapshotReply{Kthxbai{*seq, std::string(frames[4]), std::string(frames[3])}};
  }
  auto msg = decode_kv_frames(frames, limits, "KVSYNC");
  if (!msg) return msg.error();
  if (msg->key.empty()) return error(K::kBadField, "KVSYNC with empty key");
  return SnapshotReply{std::move(msg).value()};
}

DecodeResult<Update> decode_update(FrameViews frames, const Limits& limits) {
  if (!frames.empty() && frames[0] == kHugz) {
    if (auto e = check_frame_count(frames, kKvFrames, "HUGZ")) return *e;
    auto seq = decode_sequence(frames[1]);
    if (!seq) return seq.error();
    return Update{Hugz{*seq}};
  }
  auto msg = decode_kv_frames(frames, limits, "KVPUB");
  if (!msg) return msg.error();
  if (msg->key.empty()) return error(K::kBadField, "KVPUB with empty key");
  return Update{std::move(msg).value()};
}

std::string encode_sequence(std::uint64_t sequence) {
  std::string out;
  out.reserve(kSequenceSize);
  put_be<std::uint64_t>(out, sequence);
  return out;
}

KvMsgFrames::KvMsgFrames(std::string_view key, std::uint64_t sequence, std::string_view uuid,
                         std::string_view properties, std::string_view body)
    : views_{key, std::string_view(sequence_, kSequenceSize), uuid, properties, body} {
  for (std::size_t i = 0; i < kSequenceSize; ++i) {
    sequence_[i] = static_cast<char>(sequence >> (8 * (kSequenceSize - 1 - i)));
  }
}

Frames encode_icanhaz(const Icanhaz& msg) { return {std::string(kIcanhaz), msg.subtree}; }

Frames encode_kvmsg(const KvMsg& msg) {
  return {msg.key, encode_sequence(msg.sequence), msg.uuid, msg.properties, msg.body};
}

Frames encode_kthxbai(const Kthxbai& msg) {
  return {std::string(kKthxbai), encode_sequence(msg.sequence), {}, msg.properties, msg.subtree};
}

Frames encode_hugz(const Hugz& msg) { return {std::string(kHugz), encode_sequence(msg.sequence), {}, {}, {}}; }

}  // namespace zstore::protocol::chp
