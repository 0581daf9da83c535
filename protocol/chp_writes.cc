#include "protocol/chp_writes.h"

#include <charconv>
#include <vector>

#include "protocol/byte_order.h"

namespace zstore::protocol::chp {
namespace {

using K = DecodeErrorKind;

DecodeError error(K kind, std::string detail) { return decode_error(kind, std::move(detail)); }

// A decimal without sign or leading garbage, in range.
bool parse_decimal(std::string_view text, std::uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

constexpr std::string_view kOutcomes[] = {"applied", "refused", "failed", "not-active", "unknown"};

}  // namespace

DecodeResult<WriteRequest> decode_write(FrameViews frames, const Limits& limits) {
  if (frames.empty() || frames[0] != kWriteCommand) return error(K::kUnknownId, "not a WRITE?");
  if (frames.size() != 1 + kKvFrames) return error(K::kFrameCount, "WRITE? needs 6 frames");
  auto kv = decode_kvset_view(frames.subspan(1), limits);
  if (!kv) return kv.error();
  if (kv->uuid.size() != kUuidSize) return error(K::kBadField, "WRITE? needs a 16-byte uuid");
  auto props = parse_properties(kv->properties);
  if (!props) return props.error();
  WriteRequest out{kv->key, kv->uuid, kv->body, kv->ttl_seconds, {}, {}};
  std::vector<Property> kept;
  for (auto& [name, value] : *props) {
    Precondition p;
    if (name == kIfSeqProperty) {
      p.kind = Precondition::Kind::kSequence;
      if (!parse_decimal(value, &p.sequence)) return error(K::kBadField, "WRITE? if-seq is not a decimal");
    } else if (name == kIfAbsentProperty) {
      if (value != "1") return error(K::kBadField, "WRITE? if-absent must be 1");
      p.kind = Precondition::Kind::kAbsent;
    } else {
      kept.emplace_back(std::move(name), std::move(value));
      continue;
    }
    if (out.precondition.kind != Precondition::Kind::kNone) {
      return error(K::kBadField, "WRITE? with more than one precondition");
    }
    out.precondition = p;
  }
  if (out.precondition.kind == Precondition::Kind::kAbsent && kv->body.empty()) {
    return error(K::kBadField, "WRITE? delete with if-absent");
  }
  out.properties =
      out.precondition.kind == Precondition::Kind::kNone ? std::string(kv->properties) : format_properties(kept);
  return out;
}

void encode_write(std::string_view key, std::string_view uuid, std::string_view properties, std::string_view body,
                  const Precondition& precondition, Frames& out) {
  out.resize(1 + kKvFrames);
  out[0].assign(kWriteCommand);
  out[1].assign(key);
  out[2].assign(kSequenceSize, '\0');
  out[3].assign(uuid);
  std::string& props = out[4];
  props.assign(properties);
  if (precondition.kind == Precondition::Kind::kSequence) {
    char digits[20];
    auto end = std::to_chars(digits, digits + sizeof digits, precondition.sequence).ptr;
    props.append(kIfSeqProperty).append("=").append(digits, end).append("\n");
  } else if (precondition.kind == Precondition::Kind::kAbsent) {
    props.append(kIfAbsentProperty).append("=1\n");
  }
  out[5].assign(body);
}

Frames encode_write(std::string_view key, std::string_view uuid, std::string_view properties, std::string_view body,
                    const Precondition& precondition) {
  Frames out;
  encode_write(key, uuid, properties, body, precondition, out);
  return out;
}

const char* to_string(WriteOutcome::Kind kind) { return kOutcomes[static_cast<std::size_t>(kind)].data(); }

Frames encode_written(const WriteOutcome& outcome) {
  return {std::string(kWrittenCommand), outcome.uuid, std::string(kOutcomes[static_cast<std::size_t>(outcome.kind)]),
          encode_sequence(outcome.sequence), outcome.detail};
}

WrittenFrames::WrittenFrames(const WriteOutcome& outcome)
    : views_{kWrittenCommand, outcome.uuid, kOutcomes[static_cast<std::size_t>(outcome.kind)],
             std::string_view(sequence_, kSequenceSize), outcome.detail} {
  store_be<std::uint64_t>(sequence_, outcome.sequence);
}

DecodeResult<WriteOutcome> decode_written(FrameViews frames) {
  if (frames.empty() || frames[0] != kWrittenCommand) return error(K::kUnknownId, "not a WRITTEN");
  if (frames.size() != 5) return error(K::kFrameCount, "WRITTEN needs 5 frames");
  if (frames[1].size() != kUuidSize) return error(K::kBadField, "WRITTEN needs a 16-byte uuid");
  if (frames[3].size() != kSequenceSize) return error(K::kBadField, "WRITTEN sequence is not 8 bytes");
  if (frames[4].size() > 4096) return error(K::kTooLarge, "WRITTEN detail too large");
  WriteOutcome out;
  std::size_t i = 0;
  while (i < std::size(kOutcomes) && kOutcomes[i] != frames[2]) ++i;
  if (i == std::size(kOutcomes)) return error(K::kBadField, "WRITTEN with an unknown outcome");
  out.kind = static_cast<WriteOutcome::Kind>(i);
  out.uuid = std::string(frames[1]);
  out.sequence = get_be<std::uint64_t>(frames[3]);
  out.detail = std::string(frames[4]);
  return out;
}

}  // namespace zstore::protocol::chp
