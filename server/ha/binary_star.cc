#include "server/ha/binary_star.h"

namespace zstore::server {

std::string_view to_string(HaState state) {
  switch (state) {
    case HaState::kPrimary:
      return "primary";
    case HaState::kBackup:
      return "backup";
    case HaState::kActive:
      return "active";
    case HaState::kPassive:
      return "passive";
  }
  return "unknown";
}

std::optional<HaState> parse_ha_state(std::string_view digit) {
  if (digit.size() != 1 || digit[0] < '1' || digit[0] > '4') return std::nullopt;
  return static_cast<HaState>(digit[0] - '0');
}

BinaryStar::BinaryStar(HaState initial, std::chrono::milliseconds peer_timeout, Clock::time_point now)
    : state_(initial), role_(initial), peer_timeout_(peer_timeout), peer_expiry_(now + peer_timeout) {}

bool BinaryStar::newer(MapFacts own, MapFacts peer) const {
  if (own.synced != peer.synced) return own.synced;
  if (own.last != peer.last) return own.last > peer.last;
  return role_ == HaState::kPrimary;
}

HaState BinaryStar::on_peer_state(HaState peer, MapFacts peer_map, MapFacts own_map, Clock::time_point now) {
  peer_expiry_ = now + peer_timeout_;
  bool peer_starting = peer == HaState::kPrimary || peer == HaState::kBackup;
  switch (state_) {
    case HaState::kPrimary:
    case HaState::kBackup:
      if (peer == HaState::kActive) {
        state_ = HaState::kPassive;
      } else if (own_map.synced && (peer_starting || peer == HaState::kPassive) && newer(own_map, peer_map)) {
        // Both starting: the newer map serves. A passive peer goes active
        // itself on hearing us unless its map is incomplete.
        if (peer_starting || !peer_map.synced) state_ = HaState::kActive;
      }
      break;
    case HaState::kActive:
      // Dual actives (a healed partition): the backup steps down and hands
      // over what only it has before it resyncs.
      if (peer == HaState::kActive && role_ == HaState::kBackup) state_ = HaState::kPassive;
      break;
    case HaState::kPassive:
      if (!own_map.synced) break;  // an incomplete map never serves
      // The peer restarted and lost its role: we hold a complete map (and
      // take over what only it has, see ChpServer).
      if (peer_starting) state_ = HaState::kActive;
      // Dual passives: the newer map takes over.
      else if (peer == HaState::kPassive && newer(own_map, peer_map))
        state_ = HaState::kActive;
      break;
  }
  return state_;
}

bool BinaryStar::on_client_vote(bool synced, Clock::time_point now, std::string_view* reason) {
  switch (state_) {
    case HaState::kActive:
      return true;
    case HaState::kPrimary:
      if (peer_alive(now)) {
        *reason = "primary still waiting to hear its peer";
        return false;
      }
      if (!synced) {
        *reason = "primary alone with an incomplete map: refusing to serve it";
        return false;
      }
      state_ = HaState::kActive;  // alone: the backup never showed up
      return true;
    case HaState::kBackup:
      *reason = "backup serves only after the primary was seen active";
      return false;
    case HaState::kPassive:
      if (peer_alive(now)) {
        *reason = "passive while the active peer is alive";
        return false;
      }
      if (!synced) {
        *reason = "peer dead but this server never completed a sync: refusing to serve an incomplete map";
        return false;
      }
      state_ = HaState::kActive;
      return true;
  }
  return false;
}

}  // namespace zstore::server
