#include "server/binary_star.h"

namespace zstore::server {

std::string_view to_string(HaState state) {
  switch (state) {
    case HaState::kPrimary: return "primary";
    case HaState::kBackup: return "backup";
    case HaState::kActive: return "active";
    case HaState::kPassive: return "passive";
  }
  return "unknown";
}

std::optional<HaState> parse_ha_state(std::string_view digit) {
  if (digit.size() != 1 || digit[0] < '1' || digit[0] > '4') return std::nullopt;
  return static_cast<HaState>(digit[0] - '0');
}

BinaryStar::BinaryStar(HaState initial, std::chrono::milliseconds peer_timeout, Clock::time_point now)
    : state_(initial), role_(initial), peer_timeout_(peer_timeout), peer_expiry_(now + peer_timeout) {}

HaState BinaryStar::on_peer_state(HaState peer, Clock::time_point now) {
  peer_expiry_ = now + peer_timeout_;
  switch (state_) {
    case HaState::kPrimary:
      if (peer == HaState::kBackup) state_ = HaState::kActive;
      else if (peer == HaState::kActive) state_ = HaState::kPassive;
      break;
    case HaState::kBackup:
      if (peer == HaState::kActive) state_ = HaState::kPassive;
      break;
    case HaState::kActive:
      // Dual actives: the backup steps down and resyncs from the primary.
      if (peer == HaState::kActive && role_ == HaState::kBackup) state_ = HaState::kPassive;
      break;
    case HaState::kPassive:
      // The peer restarted and lost its role: we hold the newest map.
      if (peer == HaState::kPrimary || peer == HaState::kBackup) state_ = HaState::kActive;
      // Dual passives: the primary takes over.
      else if (peer == HaState::kPassive && role_ == HaState::kPrimary) state_ = HaState::kActive;
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
