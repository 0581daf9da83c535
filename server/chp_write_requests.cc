#include "server/chp_write_requests.h"

#include <utility>

namespace zstore::server {

namespace chp = protocol::chp;
using Kind = chp::WriteOutcome::Kind;

std::optional<chp::WriteOutcome> ChpWriteRequests::earlier(std::string_view uuid) const {
  auto it = outcomes_.find(std::string(uuid));
  if (it == outcomes_.end()) return std::nullopt;
  return it->second;
}

void ChpWriteRequests::add(std::string identity, storage::ChpWrite write, chp::Precondition precondition) {
  keys_.insert(write.key);
  requests_.push_back({std::move(identity), std::move(write), precondition});
}

std::vector<ChpWriteRequests::Reply> ChpWriteRequests::decide(storage::ChpStore& store, std::uint64_t now_ms,
                                                               std::vector<storage::ChpWrite>* writes) {
  std::vector<Reply> replies;
  writes->clear();
  deciding_.clear();
  for (auto& r : requests_) {
    storage::ChpEntry entry;
    bool found = false;
    storage::Status s = store.get(r.write.key, &entry, &found);
    if (!s.ok()) {
      replies.push_back({std::move(r.identity), {Kind::kFailed, r.write.uuid, 0, "reading the key: " + s.message()}});
      continue;
    }
    if (found && entry.expires_at_ms != 0 && entry.expires_at_ms <= now_ms) found = false;  // lapsed, not yet swept
    const std::uint64_t current = found ? entry.sequence : 0;
    // A retry of a write that is still the key's latest (after a failover
    // or a restart, when no outcome is remembered): it was applied.
    if (found && entry.uuid == r.write.uuid) {
      replies.push_back({std::move(r.identity), {Kind::kApplied, r.write.uuid, current, {}}});
      continue;
    }
    bool holds = true;
    if (r.precondition.kind == chp::Precondition::Kind::kSequence) holds = found && current == r.precondition.sequence;
    if (r.precondition.kind == chp::Precondition::Kind::kAbsent) holds = !found;
    if (!holds) {
      replies.push_back({std::move(r.identity), {Kind::kRefused, r.write.uuid, current, {}}});
      continue;
    }
    deciding_.push_back({std::move(r.identity), r.write.uuid});
    writes->push_back(std::move(r.write));
  }
  requests_.clear();
  keys_.clear();
  return replies;
}

std::vector<ChpWriteRequests::Reply> ChpWriteRequests::applied(const std::vector<storage::ChpWrite>& writes) {
  std::vector<Reply> replies;
  for (std::size_t i = 0; i < writes.size() && i < deciding_.size(); ++i) {
    chp::WriteOutcome outcome{Kind::kApplied, writes[i].uuid, writes[i].sequence, {}};
    remember(outcome);
    replies.push_back({std::move(deciding_[i].identity), std::move(outcome)});
  }
  deciding_.clear();
  return replies;
}

std::vector<ChpWriteRequests::Reply> ChpWriteRequests::failed(const std::string& why) {
  std::vector<Reply> replies;
  for (auto& d : deciding_) replies.push_back({std::move(d.identity), {Kind::kFailed, std::move(d.uuid), 0, why}});
  deciding_.clear();
  return replies;
}

void ChpWriteRequests::remember_applied(std::string_view uuid, std::uint64_t sequence) {
  if (uuid.size() != chp::kUuidSize) return;  // an expiry, or a delete without uuid
  remember({Kind::kApplied, std::string(uuid), sequence, {}});
}

void ChpWriteRequests::remember(const chp::WriteOutcome& outcome) {
  if (remembered_ == 0) return;
  if (!outcomes_.emplace(outcome.uuid, outcome).second) return;
  order_.push_back(outcome.uuid);
  while (order_.size() > remembered_) {
    outcomes_.erase(order_.front());
    order_.pop_front();
  }
}

}  // namespace zstore::server
