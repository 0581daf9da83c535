// CHP (rfc 12, Clustered Hashmap Protocol) codec: typed messages <-> frames.
//
// Wire forms (ROUTER identity frames are the caller's business):
//   ICANHAZ?  2 frames: "ICANHAZ?" | subtree
//   KVSYNC, KVPUB, KVSET  5 frames: key | seq (8 bytes BE) | uuid (0 or 16) |
//                         properties ("name=value\n"*) | body
//   KTHXBAI   5 frames: "KTHXBAI" | seq | "" | "" | subtree
//   HUGZ      5 frames: "HUGZ" | seq | "" | "" | ""
// Decoders never throw and never read past a frame: bad input yields a
// DecodeError naming what was wrong.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "protocol/decode_result.h"
#include "protocol/frames.h"

namespace zstore::protocol::chp {

inline constexpr std::string_view kIcanhaz = "ICANHAZ?";
inline constexpr std::string_view kKthxbai = "KTHXBAI";
// zstore's HA peer requests (docs/chp-extensions.md): a snapshot like
// ICANHAZ?'s whose keys with a TTL also carry their absolute expiry, ms
// since the Unix epoch, so a follower does not round it to whole seconds.
inline constexpr std::string_view kPeerSnapshot = "PEERSNAPSHOT?";
// And a follower's catch-up after a sequence gap: ["CATCHUP?", after (8
// bytes, big-endian)], answered like a resume (the updates after `after`,
// exact expiries, KTHXBAI with resumed=1) or, when the history no longer
// reaches back, by a bare KTHXBAI: then it asks for a whole snapshot.
inline constexpr std::string_view kPeerCatchup = "CATCHUP?";
inline constexpr std::string_view kExpiresAtProperty = "expires-at";
// And, in a RECONCILE? reply, when the update reached the pair (ms since the
// Unix epoch): the hand-over's last-writer-wins clock.
inline constexpr std::string_view kWrittenAtProperty = "written-at";
// And on a delete without UUID in that reply: not an expiry but a client's
// set whose key was deleted or expired since (its value is gone), so the
// hand-over still weighs that write by its written-at.
inline constexpr std::string_view kSupersededProperty = "superseded";
// The epochs that led to a map's last sequence ("base:last,...",
// storage/chp/chp_epochs.h), in every KTHXBAI and the HA link's state; and the
// KTHXBAI properties of a resume (docs/chp-extensions.md).
inline constexpr std::string_view kEpochsProperty = "epochs";
inline constexpr std::string_view kHistoryFromProperty = "history-from";
inline constexpr std::string_view kResumedProperty = "resumed";
// A read replica that has not heard its upstream for longer than its bound
// (docs/replicas.md): the milliseconds since it last did.
inline constexpr std::string_view kStaleProperty = "stale-ms";
inline constexpr std::string_view kHugz = "HUGZ";
inline constexpr std::size_t kUuidSize = 16;
inline constexpr std::size_t kSequenceSize = 8;
inline constexpr std::size_t kKvFrames = 5;

// A key-value message as carried by KVSYNC, KVPUB and KVSET.
struct KvMsg {
  std::string key;
  std::uint64_t sequence = 0;
  std::string uuid;        // empty or exactly kUuidSize bytes
  std::string properties;  // raw "name=value\n"*, kept and republished as is
  std::string body;        // empty means delete
  bool operator==(const KvMsg&) const = default;
};

struct Icanhaz {
  std::string subtree;  // key prefix; empty = whole map
  // zstore's resume (docs/chp-extensions.md): the requester's last applied
  // sequence, sent as an optional third frame (8 bytes, big-endian).
  std::optional<std::uint64_t> resume_after;
  bool operator==(const Icanhaz&) const = default;
};

struct Kthxbai {
  std::uint64_t sequence = 0;  // the snapshot's sequence
  std::string subtree;
  std::string properties;  // zstore's extensions (docs/chp-extensions.md); others send none
  bool operator==(const Kthxbai&) const = default;
};

struct Hugz {
  std::uint64_t sequence = 0;
  bool operator==(const Hugz&) const = default;
};

// Size limits applied by decoders to untrusted input.
struct Limits {
  std::size_t max_key_bytes = 64 * 1024;
  std::size_t max_value_bytes = 16 * 1024 * 1024;
  std::size_t max_properties_bytes = 64 * 1024;
  std::uint64_t max_ttl_seconds = 10ull * 365 * 24 * 3600;
};

using Property = std::pair<std::string, std::string>;

// Parses "name=value\n"*. Names are non-empty and contain no '=' or '\n';
// a final entry without '\n' is accepted (some clients omit it).
DecodeResult<std::vector<Property>> parse_properties(std::string_view text);
std::string format_properties(const std::vector<Property>& properties);

// The "ttl" property in seconds; 0 when absent. Errors on a non-decimal or
// out-of-range value, or on malformed properties.
DecodeResult<std::uint64_t> ttl_seconds(std::string_view properties, const Limits& limits = {});
// The absolute expiry (kExpiresAtProperty) and write time (kWrittenAtProperty)
// a reply to an HA peer carries go to *expires_at_ms and *written_ms (0 when
// absent or malformed; written_ms may be null); returns the properties
// without them.
std::string take_expires_at(std::string_view properties, std::uint64_t* expires_at_ms,
                            std::uint64_t* written_ms = nullptr);

// True for keys that would be read as a control command by clients
// ("HUGZ", "KTHXBAI", "ICANHAZ?"); servers refuse to store them.
bool is_reserved_key(std::string_view key);

// Server side.
DecodeResult<Icanhaz> decode_icanhaz(FrameViews frames, const Limits& limits = {});
// A client update. Checks: 5 frames, non-empty non-reserved key, 8-byte
// sequence, 0/16-byte uuid, well-formed properties and ttl, sizes.
DecodeResult<KvMsg> decode_kvset(FrameViews frames, const Limits& limits = {});

// A client update as views into the received frames (valid while they are),
// with its ttl already parsed: what decode_kvset checks, without copying.
struct KvSetView {
  std::string_view key;
  std::string_view uuid;
  std::string_view properties;
  std::string_view body;
  std::uint64_t ttl_seconds = 0;  // the "ttl" property; 0 when absent
};
DecodeResult<KvSetView> decode_kvset_view(FrameViews frames, const Limits& limits = {});

// Client side: what arrives on the snapshot (DEALER) socket.
using SnapshotReply = std::variant<KvMsg, Kthxbai>;
DecodeResult<SnapshotReply> decode_snapshot_reply(FrameViews frames, const Limits& limits = {});

// Client side: what arrives on the subscriber socket.
using Update = std::variant<KvMsg, Hugz>;
DecodeResult<Update> decode_update(FrameViews frames, const Limits& limits = {});

Frames encode_icanhaz(const Icanhaz& msg);
Frames encode_kvmsg(const KvMsg& msg);  // KVSYNC, KVPUB and KVSET
Frames encode_kthxbai(const Kthxbai& msg);
Frames encode_hugz(const Hugz& msg);

std::string encode_sequence(std::uint64_t sequence);

// The five frames of a KVSYNC/KVPUB/KVSET as views into the caller's
// strings (which must outlive it), without copying them: the hot publish
// and snapshot paths send these. Same bytes as encode_kvmsg().
class KvMsgFrames {
 public:
  KvMsgFrames(std::string_view key, std::uint64_t sequence, std::string_view uuid, std::string_view properties,
              std::string_view body);
  KvMsgFrames(const KvMsgFrames&) = delete;  // views_[1] points into this object
  KvMsgFrames& operator=(const KvMsgFrames&) = delete;
  FrameViews frames() const { return views_; }

 private:
  char sequence_[kSequenceSize];
  std::string_view views_[kKvFrames];
};

}  // namespace zstore::protocol::chp
