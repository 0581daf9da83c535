// BinaryStar: the Binary Star failover state machine (Guide ch. 4) for a
// primary/backup pair, pure logic with an injected clock. Stricter than the
// Guide's bstar: a primary that has not heard its peer serves clients only
// after the peer timeout, so a restarted primary never serves its stale map
// while the backup is active; a passive that never completed a sync refuses
// to take over. Takeover needs BOTH a dead peer AND a client vote, so two
// servers that can hear each other never both become active.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace zstore::server {

// Values are the wire digits "1".."4" of the state messages.
enum class HaState : std::uint8_t { kPrimary = 1, kBackup = 2, kActive = 3, kPassive = 4 };

std::string_view to_string(HaState state);
std::optional<HaState> parse_ha_state(std::string_view digit);

class BinaryStar {
 public:
  using Clock = std::chrono::steady_clock;

  // initial: kPrimary or kBackup. A peer is dead peer_timeout after its last
  // state message (or after start when never heard).
  BinaryStar(HaState initial, std::chrono::milliseconds peer_timeout, Clock::time_point now);

  HaState state() const { return state_; }
  bool active() const { return state_ == HaState::kActive; }

  // A state message from the peer. Returns the new state.
  HaState on_peer_state(HaState peer, Clock::time_point now);

  // A client voted for us (a snapshot request). synced: we hold a complete
  // copy of the map. Returns true if we are (now) active and may serve it.
  // *reason explains a refusal.
  bool on_client_vote(bool synced, Clock::time_point now, std::string_view* reason);

  bool peer_alive(Clock::time_point now) const { return now < peer_expiry_; }

 private:
  HaState state_;
  HaState role_;  // kPrimary or kBackup, fixed
  std::chrono::milliseconds peer_timeout_;
  Clock::time_point peer_expiry_;
};

}  // namespace zstore::server
