// zstore's confirmed and conditional writes (docs/chp-extensions.md,
// "Confirmed and conditional writes"): a write sent on the snapshot socket
// (client DEALER to server ROUTER) and answered there with its outcome,
// instead of a fire-and-forget KVSET on the collector.
//
//   WRITE?   6 frames: "WRITE?" | key | seq (8 bytes, 0) | uuid (16) |
//                      properties | body (empty = delete)
//            properties may carry ttl=N, and one precondition:
//            if-seq=N (the key's current sequence is N) or if-absent=1
//   WRITTEN  5 frames: "WRITTEN" | uuid | outcome | seq (8 bytes BE) | detail
//            outcome applied: seq is the write's sequence; refused: the
//            precondition did not hold, seq is the key's current sequence
//            (0 = absent); failed: not stored (detail says why);
//            not-active: this server does not take writes now (a Binary
//            Star passive): ask the other; unknown: it was written but
//            may not be durable (its fsync failed): a retry learns it.
// A server that takes WRITE? says so with writes=1 in every KTHXBAI: a
// client sends WRITE? only to such a server (the Guide's servers would
// misread it). The preconditions never reach the map or the subscribers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/chp_codec.h"

namespace zstore::protocol::chp {

inline constexpr std::string_view kWriteCommand = "WRITE?";
inline constexpr std::string_view kWrittenCommand = "WRITTEN";
inline constexpr std::string_view kWritesProperty = "writes";
inline constexpr std::string_view kIfSeqProperty = "if-seq";
inline constexpr std::string_view kIfAbsentProperty = "if-absent";

// What must hold for a write to be applied.
struct Precondition {
  enum class Kind : std::uint8_t { kNone, kSequence, kAbsent };
  Kind kind = Kind::kNone;
  std::uint64_t sequence = 0;  // kSequence
  bool operator==(const Precondition&) const = default;
};

// A decoded WRITE?: views into the received frames (valid while they are),
// the properties without the precondition, and the precondition.
struct WriteRequest {
  std::string_view key;
  std::string_view uuid;
  std::string_view body;
  std::uint64_t ttl_seconds = 0;
  std::string properties;  // as stored and published: without if-seq / if-absent
  Precondition precondition;
};

// Checks what decode_kvset_view checks on frames 1..5, a 16-byte uuid (a
// retry is known by it), and at most one well-formed precondition.
DecodeResult<WriteRequest> decode_write(FrameViews frames, const Limits& limits = {});
// properties: "name=value\n"* without a precondition (the encoder adds it).
Frames encode_write(std::string_view key, std::string_view uuid, std::string_view properties, std::string_view body,
                    const Precondition& precondition);
// The same into `out`, reusing its strings' capacity (a writer that sends
// many writes allocates nothing once its buffers are grown).
void encode_write(std::string_view key, std::string_view uuid, std::string_view properties, std::string_view body,
                  const Precondition& precondition, Frames& out);

struct WriteOutcome {
  enum class Kind : std::uint8_t { kApplied, kRefused, kFailed, kNotActive, kUnknown };
  Kind kind = Kind::kFailed;
  std::string uuid;
  std::uint64_t sequence = 0;
  std::string detail;
  bool operator==(const WriteOutcome&) const = default;
};

const char* to_string(WriteOutcome::Kind kind);
Frames encode_written(const WriteOutcome& outcome);
// The frames encode_written gives, as views of outcome (valid while it is)
// and of this object: what a server sends without copying them first.
class WrittenFrames {
 public:
  explicit WrittenFrames(const WriteOutcome& outcome);
  WrittenFrames(const WrittenFrames&) = delete;  // views_[3] points into this object
  WrittenFrames& operator=(const WrittenFrames&) = delete;
  FrameViews frames() const { return views_; }

 private:
  char sequence_[kSequenceSize];
  std::string_view views_[5];
};
DecodeResult<WriteOutcome> decode_written(FrameViews frames);

}  // namespace zstore::protocol::chp
