#include "server/ha/chp_pending.h"

namespace zstore::server {
namespace {

std::uint64_t size_of(const storage::ChpWrite& w) {
  return w.key.size() + w.uuid.size() + w.properties.size() + w.value.size();
}

}  // namespace

void PendingList::erase(Iter it) {
  bytes_ -= size_of(it->write);
  if (!it->write.uuid.empty()) {
    if (auto u = by_uuid_.find(it->write.uuid); u != by_uuid_.end() && u->second == it) by_uuid_.erase(u);
  }
  if (auto k = by_key_.find(it->write.key); k != by_key_.end()) {
    k->second.erase(it->id);
    if (k->second.empty()) by_key_.erase(k);
  }
  entries_.erase(it);
}

void PendingList::drop_older_of_key(const std::string& key, std::uint64_t before_id) {
  auto k = by_key_.find(key);
  if (k == by_key_.end()) return;
  std::vector<Iter> older;
  for (auto& [id, it] : k->second) {
    if (id >= before_id) break;
    older.push_back(it);
  }
  for (auto it : older) erase(it);
  superseded_ += older.size();
}

void PendingList::add(storage::ChpWrite write) {
  if (!write.uuid.empty() && seen_.count(write.uuid)) {  // published before its KVSET reached us
    drop_older_of_key(write.key, next_id_);
    return;
  }
  while (!entries_.empty() && (entries_.size() >= max_entries_ || bytes_ + size_of(write) > max_bytes_)) {
    erase(entries_.begin());
    ++dropped_;
  }
  if (!write.uuid.empty()) {  // the same UUID twice: keep the newer
    if (auto old = by_uuid_.find(write.uuid); old != by_uuid_.end()) erase(old->second);
  }
  std::uint64_t id = next_id_++;
  bytes_ += size_of(write);
  entries_.push_back({id, std::move(write)});
  auto it = std::prev(entries_.end());
  if (!it->write.uuid.empty()) by_uuid_[it->write.uuid] = it;
  by_key_[it->write.key][id] = it;
}

void PendingList::seen_from_active(const std::string& uuid) {
  if (uuid.empty()) return;
  if (auto it = by_uuid_.find(uuid); it != by_uuid_.end()) {
    std::string key = it->second->write.key;
    std::uint64_t id = it->second->id;
    erase(it->second);
    drop_older_of_key(key, id);
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
  bytes_ = 0;
  by_uuid_.clear();
  by_key_.clear();
  return out;
}

std::size_t PendingList::drop_received_before(std::uint64_t mark) {
  std::size_t n = 0;
  while (!entries_.empty() && entries_.front().id < mark) {  // arrival order: oldest first
    erase(entries_.begin());
    ++n;
  }
  return n;
}

}  // namespace zstore::server
