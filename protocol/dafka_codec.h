// Dafka codec: messages (dafka_messages.h) <-> ZeroMQ frames, byte-compatible
// with zeromq/dafka as described in specs/DAFKA-WIRE.md.
//
// Wire form (no signature bytes):
//   frame 0  = id (1 byte) | topic | 0x00 | version 0x01 | body fields
//   frame 1  = content, RECORD and DIRECT-RECORD only (every other message
//              is exactly one frame)
// Body fields, numbers unsigned big-endian:
//   string  = 1-byte length + bytes (so at most 255 bytes)
//   strings = 4-byte count, then per entry 4-byte length + bytes
//   sequence u64, count u32
//
// Encoding a message that cannot be represented is a programming error, not
// a runtime condition: a topic containing a NUL byte throws
// std::invalid_argument, a `string` field over 255 bytes throws
// std::length_error. Check peer-supplied values with is_valid_topic() and
// fits_short_string() before putting them in a message.
//
// decode() never throws, asserts or reads outside the frames: malformed input
// yields a DecodeError whose detail names the message and the field.
// It does not check that addresses are well formed (see is_valid_address()).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "protocol/dafka_messages.h"
#include "protocol/decode_result.h"
#include "protocol/frames.h"

namespace zstore::protocol::dafka {

inline constexpr std::uint8_t kVersion = 1;
inline constexpr std::size_t kMaxShortString = 255;
inline constexpr std::size_t kAddressSize = 32;  // hex characters
inline constexpr std::size_t kUuidBytes = 16;

// Size limits decode() applies to untrusted input.
struct Limits {
  std::size_t max_content_bytes = 64u << 20;  // frame 1 of (DIRECT-)RECORD
  std::size_t max_subjects = 65536;           // entries in CONSUMER-HELLO
  // Frame 0 (topic + header fields). 32 MiB leaves room for max_subjects
  // subjects of 255 bytes; every other message is under 1 KiB plus topic.
  std::size_t max_frame_bytes = 32u << 20;
};

// True when `s` fits a `string` field (at most 255 bytes).
bool fits_short_string(std::string_view s);

// True when `topic` can be sent as a topic prefix: it holds no NUL byte.
bool is_valid_topic(std::string_view topic);

// Encoders. One frame, or two for RECORD and DIRECT-RECORD.
// Throw as described at the top of this file on unrepresentable input.
Frames encode(const Message& msg);
Frames encode(const Record& msg);
Frames encode(const DirectRecord& msg);
// The first frame of a DIRECT-RECORD (all but the content), written into
// *out, whose capacity is reused: a sender that keeps the content where it
// is sends it as the second frame. Same bytes as encode(DirectRecord)[0];
// throws as encode() does.
void encode_direct_record_header(std::string_view topic, std::string_view partition, std::string_view subject,
                                 std::uint64_t sequence, std::string* out);
// Rewrites the sequence of a header written by encode_direct_record_header
// (its last 8 bytes), in place: the header of the next record of the same
// partition to the same topic, without encoding it again.
void set_direct_record_sequence(std::uint64_t sequence, std::string* header);
Frames encode(const Fetch& msg);
Frames encode(const Ack& msg);
Frames encode(const Head& msg);
Frames encode(const DirectHead& msg);
Frames encode(const GetHeads& msg);
Frames encode(const ConsumerHello& msg);
Frames encode(const StoreHello& msg);

// Decodes any Dafka message. Error kinds: kFrameCount (no frames, or not
// exactly 2 frames for RECORD/DIRECT-RECORD and 1 for the rest), kUnknownId,
// kTruncated (empty frame 0, topic without NUL, missing version, a field or
// strings list running past the frame), kBadVersion, kTrailing (bytes after
// the last field), kTooLarge (over a Limits bound).
DecodeResult<Message> decode(FrameViews frames, const Limits& limits = {});

// A RECORD (id kRecord) or DIRECT-RECORD (kDirectRecord) whose fields point
// into the frames it was decoded from: valid as long as they are.
struct RecordView {
  MsgId id = MsgId::kRecord;
  std::string_view topic;
  std::string_view partition;
  std::string_view subject;
  std::uint64_t sequence = 0;
  std::string_view content;
};
using Borrowed = std::variant<RecordView, Message>;
// decode() with the same checks and errors, but a RECORD or DIRECT-RECORD
// comes back as a RecordView, without copying a byte; other messages as
// decode() returns them.
DecodeResult<Borrowed> decode_borrowing(FrameViews frames, const Limits& limits = {});

// The ZeroMQ subscription for messages of `id` on `topic`: the id byte then
// the topic, without the NUL. Prefix matching applies, so a subscriber of
// "hello" also receives "hello2": compare decoded topics exactly.
std::string subscription(MsgId id, std::string_view topic);

// A node address: the 16 UUID bytes as 32 uppercase hex characters.
std::string make_address(std::span<const std::uint8_t, kUuidBytes> uuid);
// Same, for a pointer to 16 readable bytes (e.g. libuuid's uuid_t).
std::string make_address(const unsigned char uuid[kUuidBytes]);

// True for exactly 32 characters from 0-9A-F.
bool is_valid_address(std::string_view address);

// True for a topic (subject) name a store keeps: 1..255 bytes of
// well-formed UTF-8 (RFC 3629: no overlong form, surrogate or code point
// past U+10FFFF) without control characters (U+0000-U+001F, U+007F-U+009F),
// so it is safe as a database key, a log field and a metric label. (Wider
// than is_valid_topic(), which only keeps the frame's NUL terminator apart.)
bool is_valid_topic_name(std::string_view topic);

}  // namespace zstore::protocol::dafka
