#include "client/local_map.h"

namespace zstore::client {

namespace chp = protocol::chp;

std::vector<Change> LocalMap::replace(const std::map<std::string, chp::KvMsg>& snapshot, std::uint64_t sequence,
                                      ChangeSource source) {
  std::vector<Change> changes;
  std::map<std::string, Entry, std::less<>> next;
  for (const auto& [key, msg] : snapshot) {
    if (msg.body.empty()) continue;
    auto old = entries_.find(key);
    bool same = old != entries_.end() && old->second.value == msg.body && old->second.properties == msg.properties;
    if (!same) changes.push_back({key, msg.body, msg.sequence, msg.properties, false, source});
    next.emplace(key, Entry{msg.body, msg.properties, msg.sequence});
  }
  for (const auto& [key, entry] : entries_) {
    if (!next.contains(key)) changes.push_back({key, "", sequence, "", true, source});
  }
  entries_ = std::move(next);
  sequence_ = sequence;
  return changes;
}

std::vector<Change> LocalMap::merge(const std::map<std::string, chp::KvMsg>& updates, std::uint64_t sequence,
                                    ChangeSource source) {
  std::vector<Change> changes;
  for (const auto& [key, msg] : updates) {
    if (msg.body.empty()) {
      if (entries_.erase(key) > 0) changes.push_back({key, "", msg.sequence, msg.properties, true, source});
      continue;
    }
    auto old = entries_.find(key);
    bool same = old != entries_.end() && old->second.value == msg.body && old->second.properties == msg.properties;
    if (!same) changes.push_back({key, msg.body, msg.sequence, msg.properties, false, source});
    entries_.insert_or_assign(key, Entry{msg.body, msg.properties, msg.sequence});
  }
  sequence_ = sequence;
  return changes;
}

LocalMap::Applied LocalMap::apply(const chp::KvMsg& update) {
  if (update.sequence <= sequence_) return {Outcome::kStale, std::nullopt};
  sequence_ = update.sequence;
  if (update.body.empty()) {
    if (entries_.erase(update.key) == 0) return {Outcome::kApplied, std::nullopt};
    return {Outcome::kApplied, Change{update.key, "", update.sequence, update.properties, true, ChangeSource::kUpdate}};
  }
  entries_.insert_or_assign(update.key, Entry{update.body, update.properties, update.sequence});
  return {Outcome::kApplied,
          Change{update.key, update.body, update.sequence, update.properties, false, ChangeSource::kUpdate}};
}

std::optional<std::string> LocalMap::get(std::string_view key) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second.value;
}

std::map<std::string, std::string> LocalMap::values() const {
  std::map<std::string, std::string> out;
  for (const auto& [key, entry] : entries_) out.emplace(key, entry.value);
  return out;
}

std::optional<std::pair<std::string, std::uint64_t>> LocalMap::get_with_sequence(std::string_view key) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return std::make_pair(it->second.value, it->second.sequence);
}

}  // namespace zstore::client
