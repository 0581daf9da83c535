// BinaryStar: the Binary Star failover state machine (Guide ch. 4) for a
// primary/backup pair, pure logic with an injected clock. Stricter than the
// Guide's bstar:
// - a primary that has not heard its peer serves clients only after the
//   peer timeout, so a restarted primary never serves its stale map while
//   the backup is active;
// - no path leads to active without a complete map (synced): not a vote,
//   not a peer that restarted;
// - two members starting together (or both passive) elect the one with
//   the newer map: synced first, then the higher last sequence, then the
//   primary. The other follows it (and hands over what only it has first,
//   see ChpServer);
// - takeover on a vote needs BOTH a dead peer AND a client vote, so two
//   servers that can hear each other never both become active.
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

// What a member tells about its map in its state messages. A peer that
// sends only the digit (a reference bstar) is taken as synced with last 0.
struct MapFacts {
  bool synced = true;
  std::uint64_t last = 0;  // last sequence applied
};

class BinaryStar {
 public:
  using Clock = std::chrono::steady_clock;

  // initial: kPrimary or kBackup. A peer is dead peer_timeout after its last
  // state message (or after start when never heard).
  BinaryStar(HaState initial, std::chrono::milliseconds peer_timeout, Clock::time_point now);

  HaState state() const { return state_; }
  HaState role() const { return role_; }
  bool active() const { return state_ == HaState::kActive; }

  // A state message from the peer, with its map's facts and ours. Returns
  // the new state.
  HaState on_peer_state(HaState peer, MapFacts peer_map, MapFacts own_map, Clock::time_point now);

  // A client voted for us (a snapshot request). synced: we hold a complete
  // copy of the map. Returns true if we are (now) active and may serve it.
  // *reason explains a refusal.
  bool on_client_vote(bool synced, Clock::time_point now, std::string_view* reason);

  // Becoming active failed (e.g. the new epoch could not be written): back
  // to the starting role, to try again on the next vote or peer message.
  void abandon_active() { state_ = role_; }

  bool peer_alive(Clock::time_point now) const { return now < peer_expiry_; }

 private:
  bool newer(MapFacts own, MapFacts peer) const;

  HaState state_;
  HaState role_;  // kPrimary or kBackup, fixed
  std::chrono::milliseconds peer_timeout_;
  Clock::time_point peer_expiry_;
};

}  // namespace zstore::server
