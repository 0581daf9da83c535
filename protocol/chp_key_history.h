// zstore's per-key history (docs/chp-extensions.md, "Per-key history"): a
// client asks on the snapshot socket (client DEALER, server ROUTER) for one
// key's versions still in the server's history, newest first.
//
//   HISTORY?    3 frames: "HISTORY?" | key | limit (8 bytes BE, 1..1000)
//   KVHIST      8 frames: "KVHIST" | key | seq (8 bytes BE) | state |
//                         written-ms (8 bytes BE, 0 unknown) |
//                         expires-at-ms (8 bytes BE, 0 none) | properties | body
//               state: "set" (body the value), "deleted" (a client's
//               delete) or "expired" (the TTL sweep's delete); body is
//               empty unless set.
//   HISTORYEND  5 frames: "HISTORYEND" | key | outcome | count (8 bytes BE) | detail
//               outcome ok: count KVHISTs came before it (0: the history
//               holds no version of the key); refused: --acl does not let
//               the client read the key; failed: malformed or a storage
//               error (detail says which).
// A server that answers HISTORY? says so with key-history=1 in every
// KTHXBAI; a client asks only such a server.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/chp_codec.h"

namespace zstore::protocol::chp {

inline constexpr std::string_view kHistoryCommand = "HISTORY?";
inline constexpr std::string_view kKvHistCommand = "KVHIST";
inline constexpr std::string_view kHistoryEndCommand = "HISTORYEND";
inline constexpr std::string_view kKeyHistoryProperty = "key-history";
inline constexpr std::uint64_t kMaxHistoryLimit = 1000;

struct HistoryRequest {
  std::string key;
  std::uint64_t limit = 0;  // 1..kMaxHistoryLimit
  bool operator==(const HistoryRequest&) const = default;
};

struct KeyVersion {
  enum class State : std::uint8_t { kSet, kDeleted, kExpired };
  std::string key;
  std::uint64_t sequence = 0;
  State state = State::kSet;
  std::uint64_t written_ms = 0;
  std::uint64_t expires_at_ms = 0;
  std::string properties;
  std::string body;  // empty unless kSet
  bool operator==(const KeyVersion&) const = default;
};

struct HistoryEnd {
  enum class Outcome : std::uint8_t { kOk, kRefused, kFailed };
  std::string key;
  Outcome outcome = Outcome::kFailed;
  std::uint64_t count = 0;
  std::string detail;
  bool operator==(const HistoryEnd&) const = default;
};

const char* to_string(KeyVersion::State state);
const char* to_string(HistoryEnd::Outcome outcome);

Frames encode_history_request(const HistoryRequest& request);
// Checks: 3 frames, a non-empty key within limits, an 8-byte limit of 1..kMaxHistoryLimit.
DecodeResult<HistoryRequest> decode_history_request(FrameViews frames, const Limits& limits = {});

Frames encode_kvhist(const KeyVersion& version);
// Checks: 8 frames, 8-byte numbers, a known state, a body only when set, sizes.
DecodeResult<KeyVersion> decode_kvhist(FrameViews frames, const Limits& limits = {});

Frames encode_history_end(const HistoryEnd& end);
DecodeResult<HistoryEnd> decode_history_end(FrameViews frames, const Limits& limits = {});

}  // namespace zstore::protocol::chp
