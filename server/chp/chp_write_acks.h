// ChpWriteAcks: on the active of a joined Binary Star pair, the WRITTEN
// applied replies held until the passive has stored their sequence, so an
// applied outcome survives a failover (docs/high-availability.md). The
// passive's follower acknowledges the last sequence it stored, contiguously
// from ours (PEERACK, below), after each batch and every heartbeat. The
// pair is joined while those acknowledgements arrive at least every `wait`;
// a reply held longer than `wait` is sent anyway (the passive is gone, or
// far behind), and the pair then counts as apart until the passive has
// acknowledged that reply's sequence. Not thread-safe: one reactor's.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string_view>
#include <vector>

#include "server/chp/chp_write_requests.h"

namespace zstore::server {

// ["PEERACK", sequence (8 bytes, big-endian)] from the passive's follower
// to the active's snapshot ROUTER; never answered, only the HA peer may send it.
inline constexpr std::string_view kPeerAckCommand = "PEERACK";

class ChpWriteAcks {
 public:
  using Clock = std::chrono::steady_clock;
  explicit ChpWriteAcks(std::chrono::milliseconds wait) : wait_(wait) {}

  // The passive stored every update of ours up to sequence.
  void acknowledged(std::uint64_t sequence, Clock::time_point now);
  // Whether an applied reply must wait for the passive now.
  bool joined(Clock::time_point now) const;
  // Holds an applied reply (sequence: its write's) until due(); precondition: joined(now).
  void hold(ChpWriteRequests::Reply reply, Clock::time_point now);
  // The replies acknowledged by now, and those held past `wait` (counted in
  // *timed_out; the pair is then apart), in the order they were held.
  std::vector<ChpWriteRequests::Reply> due(Clock::time_point now, std::uint64_t* timed_out);
  // Forgets every held reply (this member stopped being active: their
  // writers learn nothing, an unknown outcome) and the passive's progress.
  void reset();
  // When the oldest held reply times out; nullopt when none is held.
  std::optional<Clock::time_point> next_deadline() const;
  std::uint64_t acknowledged() const { return acked_; }
  bool empty() const { return held_.empty(); }

 private:
  struct Held {
    ChpWriteRequests::Reply reply;
    Clock::time_point deadline;
  };
  std::chrono::milliseconds wait_;
  std::uint64_t acked_ = 0;
  std::optional<Clock::time_point> last_ack_;
  std::uint64_t apart_until_ = 0;  // after a time-out: joined again once acked_ reaches it
  std::deque<Held> held_;          // in sequence order (replies are held as they are committed)
};

}  // namespace zstore::server
