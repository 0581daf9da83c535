#include "server/chp/chp_write_requests.h"

#include <utility>

namespace zstore::server {

namespace chp = protocol::chp;
using Kind = chp::WriteOutcome::Kind;

ChpWriteRequests::ChpWriteRequests(std::size_t remembered) : outcomes_(remembered) {}

std::optional<chp::WriteOutcome> ChpWriteRequests::earlier(std::string_view uuid) const {
  auto sequence = outcomes_.find(uuid);
  if (!sequence) return std::nullopt;
  return chp::WriteOutcome{Kind::kApplied, std::string(uuid), *sequence, {}};
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
  std::vector<std::string_view> keys;
  keys.reserve(requests_.size());
  for (const auto& r : requests_) keys.push_back(r.write.key);
  std::vector<storage::ChpKeyVersion> versions;
  storage::Status read = store.current_versions(keys, &versions);
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    auto& r = requests_[i];
    if (!read.ok()) {
      replies.push_back(
          {std::move(r.identity), {Kind::kFailed, r.write.uuid, 0, "reading the key: " + read.message()}});
      continue;
    }
    const storage::ChpKeyVersion& v = versions[i];
    // Lapsed but not yet swept: absent.
    const bool found = v.found && !(v.expires_at_ms != 0 && v.expires_at_ms <= now_ms);
    const std::uint64_t current = found ? v.sequence : 0;
    // A retry of a write that is still the key's latest (after a failover
    // or a restart, when no outcome is remembered): it was applied.
    if (found && v.uuid_is(r.write.uuid)) {
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
    outcomes_.remember(outcome.uuid, outcome.sequence);
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
  outcomes_.remember(uuid, sequence);  // not an expiry's or a delete's without uuid (not 16 bytes)
}

}  // namespace zstore::server
