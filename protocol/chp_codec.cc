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

// Checks the common 5-frame layout without command-specific checks; the
// sequence goes to *sequence.
std::optional<DecodeError> check_kv_frames(FrameViews frames, const Limits& limits, std::string_view what,
                                           std::uint64_t* sequence) {
  if (auto e = check_frame_count(frames, kKvFrames, what)) return *e;
  auto seq = decode_sequence(frames[1]);
  if (!seq) return seq.error();
  *sequence = *seq;
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
  return std::nullopt;
}

DecodeResult<KvMsg> decode_kv_frames(FrameViews frames, const Limits& limits, std::string_view what) {
  std::uint64_t seq = 0;
  if (auto e = check_kv_frames(frames, limits, what, &seq)) return *e;
  return KvMsg{std::string(frames[0]), seq, std::string(frames[2]), std::string(frames[3]), std::string(frames[4])};
}

// Calls visit(name, value) for each "name=value" line of text; an error for
// a line without a name and '='. Allocates nothing.
template <typename Visit>
std::optional<DecodeError> for_each_property(std::string_view text, Visit&& visit) {
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    std::size_t eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return error(K::kBadField, "property line without name=value: '" + std::string(line.substr(0, 64)) + "'");
    }
    if (auto e = visit(line.substr(0, eq), line.substr(eq + 1))) return e;
  }
  return std::nullopt;
}

}  // namespace

DecodeResult<std::vector<Property>> parse_properties(std::string_view text) {
  std::vector<Property> out;
  auto e = for_each_property(text, [&](std::string_view name, std::string_view value) -> std::optional<DecodeError> {
    out.emplace_back(std::string(name), std::string(value));
    return std::nullopt;
  });
  if (e) return *e;
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
  std::uint64_t ttl = 0;
  auto e =
      for_each_property(properties, [&](std::string_view name, std::string_view value) -> std::optional<DecodeError> {
        if (name != "ttl") return std::nullopt;
        auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), ttl);
        if (value.empty() || ec != std::errc() || ptr != value.data() + value.size()) {
          return error(K::kBadField,
                       "ttl is not a decimal number of seconds: '" + std::string(value.substr(0, 32)) + "'");
        }
        if (ttl > limits.max_ttl_seconds) return error(K::kTooLarge, "ttl " + std::string(value) + " exceeds limit");
        return std::nullopt;
      });
  if (e) return *e;
  return ttl;
}

bool is_reserved_key(std::string_view key) { return key == kHugz || key == kKthxbai || key == kIcanhaz; }

DecodeResult<Icanhaz> decode_icanhaz(FrameViews frames, const Limits& limits) {
  if (frames.size() != 3) {
    if (auto e = check_frame_count(frames, 2, "ICANHAZ?")) return *e;
  }
  if (frames[0] != kIcanhaz) return error(K::kUnknownId, "snapshot request is not ICANHAZ?");
  if (frames[1].size() > limits.max_key_bytes) return error(K::kTooLarge, "subtree exceeds key size limit");
  Icanhaz req{std::string(frames[1]), std::nullopt};
  if (frames.size() == 3) {
    auto after = decode_sequence(frames[2]);
    if (!after) return after.error();
    req.resume_after = *after;
  }
  return req;
}

DecodeResult<KvSetView> decode_kvset_view(FrameViews frames, const Limits& limits) {
  std::uint64_t seq = 0;
  if (auto e = check_kv_frames(frames, limits, "KVSET", &seq)) return *e;
  if (frames[0].empty()) return error(K::kBadField, "KVSET with empty key");
  if (is_reserved_key(frames[0])) return error(K::kBadField, "KVSET of reserved key '" + std::string(frames[0]) + "'");
  auto ttl = ttl_seconds(frames[3], limits);
  if (!ttl) return ttl.error();
  return KvSetView{frames[0], frames[2], frames[3], frames[4], *ttl};
}

DecodeResult<KvMsg> decode_kvset(FrameViews frames, const Limits& limits) {
  auto view = decode_kvset_view(frames, limits);
  if (!view) return view.error();
  return KvMsg{std::string(view->key), get_be<std::uint64_t>(frames[1]), std::string(view->uuid),
               std::string(view->properties), std::string(view->body)};
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

Frames encode_icanhaz(const Icanhaz& msg) {
  Frames frames{std::string(kIcanhaz), msg.subtree};
  if (msg.resume_after) {
    std::string after;
    put_be<std::uint64_t>(after, *msg.resume_after);
    frames.push_back(std::move(after));
  }
  return frames;
}

Frames encode_kvmsg(const KvMsg& msg) {
  return {msg.key, encode_sequence(msg.sequence), msg.uuid, msg.properties, msg.body};
}

Frames encode_kthxbai(const Kthxbai& msg) {
  return {std::string(kKthxbai), encode_sequence(msg.sequence), {}, msg.properties, msg.subtree};
}

Frames encode_hugz(const Hugz& msg) { return {std::string(kHugz), encode_sequence(msg.sequence), {}, {}, {}}; }

}  // namespace zstore::protocol::chp
