#include "server/dafka/dafka_gaps.h"

namespace zstore::server {

void GapTracker::note_seen(const Key& key, std::uint64_t offset) {
  Gap& g = gaps_[key];
  if (!g.has_highest || offset > g.highest) g.highest = offset;
  g.has_highest = true;
}

std::optional<std::uint64_t> GapTracker::highest_seen(const Key& key) const {
  auto it = gaps_.find(key);
  if (it == gaps_.end() || !it->second.has_highest) return std::nullopt;
  return it->second.highest;
}

GapTracker::Action GapTracker::next(const Key& key, std::uint64_t from, std::optional<std::uint64_t> after_gap,
                                    bool from_timer, Clock::time_point now, Range* missing) {
  auto it = gaps_.find(key);
  if (it == gaps_.end()) return Action::kNone;
  Gap& g = it->second;
  std::uint64_t end = after_gap ? *after_gap : (g.has_highest && g.highest >= from ? g.highest + 1 : from);
  if (end <= from) {
    gaps_.erase(it);
    return Action::kNone;
  }
  bool same = g.asked_from == from;
  if (same && now - g.asked_at < retry_) return Action::kNone;
  if (!same) g.retries = 0;
  *missing = {from, end};
  return from_timer && g.retries >= max_retries_ ? Action::kGiveUp : Action::kFetch;
}

void GapTracker::asked(const Key& key, std::uint64_t from, bool from_timer, Clock::time_point now) {
  auto it = gaps_.find(key);
  if (it == gaps_.end()) return;
  it->second.asked_from = from;
  it->second.asked_at = now;
  if (from_timer) ++it->second.retries;
}

void GapTracker::reset_retries(const Key& key) {
  auto it = gaps_.find(key);
  if (it != gaps_.end()) it->second.retries = 0;
}

std::vector<GapTracker::Key> GapTracker::keys() const {
  std::vector<Key> out;
  out.reserve(gaps_.size());
  for (const auto& [key, gap] : gaps_) out.push_back(key);
  return out;
}

}  // namespace zstore::server
