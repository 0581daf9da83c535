// Receive budgets: ZeroMQ bounds a socket's queues in messages, not bytes.
// A CHP socket's, and the Dafka store SUB's, receive high-water mark is how
// many of the largest messages the codec accepts (protocol::chp::Limits,
// protocol::dafka::Limits) fit in a byte budget (--receive-buffer-bytes),
// so one connection's receive queue holds at most about that many bytes
// (docs/operations.md, "Memory budgets").
#pragma once

#include <algorithm>
#include <cstdint>

#include "protocol/chp_codec.h"
#include "protocol/dafka_codec.h"

namespace zstore::server {

inline constexpr std::uint64_t kDefaultReceiveBudgetBytes = 4ull << 30;
inline constexpr std::uint64_t kMaxReceiveHwm = 100'000;  // the message bound of a small-value budget

// The largest CHP message: key, sequence, UUID, properties and body
// frames, each with ZeroMQ's frame header (at most 9 bytes).
inline std::uint64_t largest_chp_message(const protocol::chp::Limits& limits) {
  return limits.max_key_bytes + 8 + 16 + limits.max_properties_bytes + limits.max_value_bytes + 5 * 9;
}

// The largest frame a CHP socket accepts (ZMQ_MAXMSGSIZE).
inline std::int64_t largest_chp_frame(const protocol::chp::Limits& limits) {
  return static_cast<std::int64_t>(
      std::max({limits.max_value_bytes, limits.max_key_bytes, limits.max_properties_bytes}) + 64);
}

// The receive high-water mark that keeps a queue of messages of at most
// `largest` bytes within budget bytes: at least 1, at most kMaxReceiveHwm.
inline int receive_hwm(std::uint64_t budget, std::uint64_t largest) {
  return static_cast<int>(std::clamp<std::uint64_t>(budget / std::max<std::uint64_t>(largest, 1), 1, kMaxReceiveHwm));
}

inline int receive_hwm(std::uint64_t budget, const protocol::chp::Limits& limits) {
  return receive_hwm(budget, largest_chp_message(limits));
}

// The largest frame the Dafka store's SUB accepts (ZMQ_MAXMSGSIZE): a
// RECORD's content or any frame 0 (protocol::dafka::Limits), with room for
// ZeroMQ's frame header.
inline std::int64_t largest_dafka_frame(const protocol::dafka::Limits& limits) {
  return static_cast<std::int64_t>(std::max(limits.max_content_bytes, limits.max_frame_bytes) + 64);
}

// The largest Dafka message: a RECORD, whose two frames are the largest
// the codec accepts (every other message is smaller).
inline std::uint64_t largest_dafka_message(const protocol::dafka::Limits& limits) {
  return limits.max_content_bytes + limits.max_frame_bytes + 2 * 9;
}

}  // namespace zstore::server
