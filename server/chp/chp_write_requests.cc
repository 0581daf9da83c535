#include "server/chp/chp_write_requests.h"

#include <algorithm>
#include <functional>
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

bool ChpWriteRequests::has_key(std::string_view key) const { return n_ != 0 && key_slots_[key_slot(key)] != 0; }

std::size_t ChpWriteRequests::key_slot(std::string_view key) const {
  const std::size_t mask = key_slots_.size() - 1;
  std::size_t i = std::hash<std::string_view>{}(key)&mask;
  while (key_slots_[i] != 0 && requests_[key_slots_[i] - 1].write.key != key) i = (i + 1) & mask;
  return i;
}

void ChpWriteRequests::index_keys() {
  key_slots_.assign(std::max<std::size_t>(64, key_slots_.size() * 2), 0);
  for (std::size_t r = 0; r < n_; ++r) key_slots_[key_slot(requests_[r].write.key)] = static_cast<std::uint32_t>(r + 1);
}

storage::ChpWrite& ChpWriteRequests::add(std::string_view identity, std::string_view key,
                                         chp::Precondition precondition) {
  if (n_ == requests_.size()) requests_.emplace_back();
  Request& r = requests_[n_++];
  r.identity.assign(identity);
  r.write.key.assign(key);
  r.precondition = precondition;
  if (2 * n_ > key_slots_.size()) {
    index_keys();  // at most half full: short probe runs
  } else {
    key_slots_[key_slot(key)] = static_cast<std::uint32_t>(n_);
  }
  return r.write;
}

std::size_t ChpWriteRequests::decide(storage::ChpStore& store, std::uint64_t now_ms,
                                     std::vector<storage::ChpWrite>* writes, std::vector<Reply>* replies) {
  std::vector<std::string_view> keys;
  std::vector<std::uint64_t> expected;  // if-seq: a key still at it need not be read
  keys.reserve(n_);
  expected.reserve(n_);
  for (std::size_t i = 0; i < n_; ++i) {
    const Request& r = requests_[i];
    keys.push_back(r.write.key);
    const bool if_seq = r.precondition.kind == chp::Precondition::Kind::kSequence;
    expected.push_back(if_seq ? r.precondition.sequence : 0);
  }
  std::vector<storage::ChpKeyVersion> versions;
  storage::Status read = store.current_versions(keys, expected, &versions);
  std::size_t n = 0;
  deciding_n_ = 0;
  for (std::size_t i = 0; i < n_; ++i) {
    Request& r = requests_[i];
    Verdict verdict = read.ok() ? judge(r.write.uuid, r.precondition, versions[i], now_ms) : Verdict{};
    if (!verdict.apply) {
      std::string detail = read.ok() ? std::string() : "reading the key: " + read.message();
      replies->push_back({r.identity, {verdict.kind, r.write.uuid, verdict.sequence, std::move(detail)}});
      storage::release_large_buffers(r.write);
      continue;
    }
    if (n == writes->size()) writes->emplace_back();
    std::swap((*writes)[n++], r.write);
    if (deciding_n_ == deciding_.size()) deciding_.emplace_back();
    deciding_[deciding_n_++].swap(r.identity);
  }
  std::fill(key_slots_.begin(), key_slots_.end(), 0);
  n_ = 0;
  return n;
}

// A request against its key's current version: applied already (kApplied
// at its sequence), refused at the current one, or to apply.
ChpWriteRequests::Verdict ChpWriteRequests::judge(std::string_view uuid, const chp::Precondition& precondition,
                                                  const storage::ChpKeyVersion& v, std::uint64_t now_ms) {
  // Lapsed but not yet swept: absent.
  const bool found = v.found && !(v.expires_at_ms != 0 && v.expires_at_ms <= now_ms);
  const std::uint64_t current = found ? v.sequence : 0;
  // A retry of a write that is still the key's latest (after a failover or
  // a restart, when no outcome is remembered): it was applied.
  if (found && v.uuid_is(uuid)) return {false, Kind::kApplied, current};
  bool holds = true;
  if (precondition.kind == chp::Precondition::Kind::kSequence) holds = found && current == precondition.sequence;
  if (precondition.kind == chp::Precondition::Kind::kAbsent) holds = !found;
  if (!holds) return {false, Kind::kRefused, current};
  return {true};
}

std::vector<ChpWriteRequests::Reply> ChpWriteRequests::applied(std::span<const storage::ChpWrite> writes) {
  auto replies = applied_unsynced(writes);
  for (const auto& r : replies) outcomes_.remember(r.outcome.uuid, r.outcome.sequence);
  return replies;
}

std::vector<ChpWriteRequests::Reply> ChpWriteRequests::applied_unsynced(std::span<const storage::ChpWrite> writes) {
  std::vector<Reply> replies;
  replies.reserve(deciding_n_);
  for (std::size_t i = 0; i < writes.size() && i < deciding_n_; ++i) {
    replies.push_back({deciding_[i], {Kind::kApplied, writes[i].uuid, writes[i].sequence, {}}});
  }
  deciding_n_ = 0;
  return replies;
}

std::vector<ChpWriteRequests::Reply> ChpWriteRequests::failed(std::span<const storage::ChpWrite> writes,
                                                              const std::string& why) {
  std::vector<Reply> replies;
  for (std::size_t i = 0; i < writes.size() && i < deciding_n_; ++i) {
    replies.push_back({deciding_[i], {Kind::kFailed, writes[i].uuid, 0, why}});
  }
  deciding_n_ = 0;
  return replies;
}

void ChpWriteRequests::remember_applied(std::string_view uuid, std::uint64_t sequence) {
  outcomes_.remember(uuid, sequence);  // not an expiry's or a delete's without uuid (not 16 bytes)
}

}  // namespace zstore::server
