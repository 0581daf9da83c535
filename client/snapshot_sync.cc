#include "client/snapshot_sync.h"

#include <utility>

#include "protocol/chp_key_history.h"
#include "protocol/chp_writes.h"

namespace zstore::client {

namespace chp = protocol::chp;

KthxbaiFacts read_kthxbai(std::string_view properties) {
  KthxbaiFacts facts;
  auto props = chp::parse_properties(properties);
  if (!props) return facts;
  for (const auto& [name, value] : *props) {
    if (name == chp::kHistoryFromProperty) facts.offers_resume = true;
    if (name == chp::kResumedProperty && value == "1") facts.resumed = true;
    if (name == chp::kWritesProperty && value == "1") facts.takes_writes = true;
    if (name == chp::kKeyHistoryProperty && value == "1") facts.key_history = true;
  }
  return facts;
}

SnapshotSync::SnapshotSync(std::string subtree, std::size_t max_buffered)
    : subtree_(std::move(subtree)), max_buffered_(max_buffered) {}

void SnapshotSync::add_entry(chp::KvMsg entry) {
  if (!in_subtree(entry.key, subtree_)) return;
  std::string key = entry.key;
  entries_.insert_or_assign(std::move(key), std::move(entry));
}

bool SnapshotSync::buffer_update(chp::KvMsg update) {
  if (updates_.size() >= max_buffered_) return false;
  updates_.push_back(std::move(update));
  return true;
}

LoadedSnapshot SnapshotSync::finish(std::uint64_t sequence, bool resumed) {
  LoadedSnapshot out{std::move(entries_), sequence, resumed, std::move(updates_)};
  entries_.clear();
  updates_.clear();
  return out;
}

}  // namespace zstore::client
