#include "server/chp_pending.h"

namespace zstore::server {

void PendingList::add(storage::ChpWrite write) {
  if (!write.uuid.empty() && seen_.count(write.uuid)) return;
  if (entries_.size() >= max_entries_) {
    if (!entries_.front().write.uuid.empty()) by_uuid_.erase(entries_.front().write.uuid);
    entries_.pop_front();
    ++dropped_;
  }
  entries_.push_back({next_id_++, std::move(write)});
  const std::string& uuid = entries_.back().write.uuid;
  if (!uuid.empty()) {
    auto it = std::prev(entries_.end());
    auto [old, inserted] = by_uuid_.try_emplace(uuid, it);
    if (!inserted) {  // the same UUID twice: keep the newer
      entries_.erase(old->second);
      old->second = it;
    }
  }
}

void PendingList::seen_from_active(const std::string& uuid) {
  if (uuid.empty()) return;
  if (auto it = by_uuid_.find(uuid); it != by_uuid_.end()) {
    entries_.erase(it->second);
    by_uuid_.erase(it);
  }
  if (seen_.insert(uuid).second) {
    seen_order_.push_back(uuid);
    if (seen_order_.size() > max_seen_) {
      seen_.erase(seen_order_.front());
      seen_order_.pop_front();
    }
  }
}

std::vector<storage::ChpWrite> PendingList::take_all() {
  std::vector<storage::ChpWrite> out;
  out.reserve(entries_.size());
  for (auto& e : entries_) {
    e.write.sequence = 0;
    out.push_back(std::move(e.write));
  }
  entries_.clear();
  by_uuid_.clear();
  return out;
}

std::size_t PendingList::drop_received_before(std::uint64_t mark) {
  std::size_t n = 0;
  while (!entries_.empty() && entries_.front().id < mark) {  // arrival order: oldest first
    if (!entries_.front().write.uuid.empty()) by_uuid_.erase(entries_.front().write.uuid);
    entries_.pop_front();
    ++n;
  }
  return n;
}

}  // namespace zstore::server
