#include "server/chp/chp_snapshots.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "protocol/chp_codec.h"
#include "server/reactor/zmq_frames.h"

namespace zstore::server {

namespace chp = protocol::chp;

namespace {

// The properties a record is sent with: its ttl replaced by the seconds
// left until it expires; for an HA peer (exact) also the expiry itself and
// when the update reached the pair. Empty when they are the stored ones.
std::string sent_properties(const storage::ChpRecordView& r, std::uint64_t now_ms, bool exact) {
  bool written = exact && r.written_ms != 0;
  if (exact && r.superseded) {
    std::vector<chp::Property> marked{{std::string(chp::kSupersededProperty), "1"}};
    if (written) marked.emplace_back(std::string(chp::kWrittenAtProperty), std::to_string(r.written_ms));
    return chp::format_properties(marked);
  }
  if (r.entry.expires_at_ms == 0 && !written) return {};
  auto parsed = chp::parse_properties(r.entry.properties);
  if (!parsed) return {};
  if (r.entry.expires_at_ms != 0) {
    std::uint64_t left_ms = r.entry.expires_at_ms > now_ms ? r.entry.expires_at_ms - now_ms : 0;
    std::string left = std::to_string(std::max<std::uint64_t>(1, (left_ms + 999) / 1000));
    bool found = false;
    for (auto& [name, value] : parsed.value()) {
      if (name == "ttl") {
        value = left;
        found = true;
      }
    }
    if (!found) parsed->emplace_back("ttl", left);
    if (exact) parsed->emplace_back(std::string(chp::kExpiresAtProperty), std::to_string(r.entry.expires_at_ms));
  }
  if (written) parsed->emplace_back(std::string(chp::kWrittenAtProperty), std::to_string(r.written_ms));
  return chp::format_properties(parsed.value());
}

bool has_expired(const storage::ChpRecordView& r, std::uint64_t now_ms) {
  return r.entry.expires_at_ms != 0 && r.entry.expires_at_ms <= now_ms && !r.entry.value.empty();
}

}  // namespace

std::list<SnapshotPump::Session>::iterator SnapshotPump::erase(std::list<Session>::iterator it) {
  in_flight_ -= it->in_flight;
  return sessions_.erase(it);
}

bool SnapshotPump::evict_paused(const std::string* group, Clock::time_point now) {
  auto victim = sessions_.end();
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    // A small answer holds no slot (start()): evicting it frees none.
    if (it->priority || it->small || !it->blocked || (group && it->group != *group)) continue;
    if (now - it->progress_at < fair_.waited) continue;
    if (victim == sessions_.end() || it->progress_at < victim->progress_at) victim = it;
  }
  if (victim == sessions_.end()) return false;
  note_unread(victim->identity, now);
  erase(victim);  // releases the cursor and its snapshot
  ++evicted_;
  return true;
}

void SnapshotPump::note_unread(const std::string& identity, Clock::time_point now) {
  constexpr std::size_t kMaxRemembered = 4096;
  if (unread_.size() >= kMaxRemembered) {
    std::erase_if(unread_, [&](const auto& e) { return now - e.second > stall_ + fair_.waited; });
    if (unread_.size() >= kMaxRemembered) unread_.clear();
  }
  unread_[identity] = now;
}

bool SnapshotPump::start(std::string identity, std::string subtree, std::unique_ptr<storage::ChpSnapshotCursor> cursor,
                         std::string kthxbai_properties, bool exact_expiry, KeyFilter allow, bool priority,
                         std::string group) {
  auto open = [&] { return Opened{std::move(cursor), std::move(kthxbai_properties)}; };
  return start(std::move(identity), std::move(subtree), open, exact_expiry, std::move(allow), priority,
               std::move(group));
}

bool SnapshotPump::start(std::string identity, std::string subtree, const Open& open, bool exact_expiry,
                         KeyFilter allow, bool priority, std::string group, const SmallAnswer& small) {
  // A client that asks again on a connection whose pipe it does not read
  // keeps its pause (and what its pipe holds): asking cannot renew a slot.
  std::optional<Session> replaced;
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    if (it->identity == identity) {
      replaced = std::move(*it);
      sessions_.erase(it);  // its bytes stay counted: they are in the same pipe
      break;
    }
  }
  auto forget_replaced = [&] {
    if (replaced) in_flight_ -= replaced->in_flight;
  };
  if (group.empty()) group = identity;
  bool served_small = false;
  if (!priority && !admit(identity, group)) {
    if (!small || unread_.contains(identity) || small_sessions() >= kMaxSmallSessions || !small()) {
      return forget_replaced(), false;
    }
    served_small = true;
  }
  Opened opened = open();
  Session s;
  s.identity = std::move(identity);
  s.subtree = std::move(subtree);
  s.cursor = std::move(opened.cursor);
  s.kthxbai_properties = std::move(opened.kthxbai_properties);
  s.exact_expiry = exact_expiry;
  s.allow = std::move(allow);
  s.priority = priority;
  s.small = served_small;
  s.progress_at = Clock::now();
  s.group = std::move(group);
  if (replaced && replaced->blocked) {
    s.blocked = true;
    s.progress_at = replaced->progress_at;
  }
  if (replaced) {
    s.sizes = std::move(replaced->sizes);
    s.next_size = replaced->next_size;
    s.in_flight = replaced->in_flight;
  }
  if (priority || served_small) {
    sessions_.push_front(std::move(s));  // pumped first
  } else {
    sessions_.push_back(std::move(s));
  }
  return true;
}

// Whether an ordinary request of identity (in group) gets a slot, taking a
// paused session's when its group's share, the slots or the byte budget
// are used up.
bool SnapshotPump::admit(const std::string& identity, const std::string& group) {
  auto now = std::max(Clock::now(), last_now_);
  std::size_t ordinary = 0, of_group = 0;
  for (const auto& s : sessions_) {
    if (s.priority || s.small) continue;
    ++ordinary;
    of_group += s.group == group ? 1 : 0;
  }
  // A connection that left its last snapshot unread takes no one's slot.
  bool unread = unread_.contains(identity);
  if (of_group >= std::max<std::size_t>(1, fair_.per_group)) {
    if (unread || !evict_paused(&group, now)) return false;
    --ordinary;
  }
  while (ordinary >= max_sessions_ || (ordinary > 0 && in_flight_ >= fair_.budget_bytes)) {
    if (unread || !evict_paused(nullptr, now)) return false;
    --ordinary;
  }
  return true;
}

SnapshotPump::Step SnapshotPump::step(zmq::socket_t& router, Session& s, std::size_t quota, std::uint64_t now_ms,
                                      Result* result) {
  for (std::size_t i = 0; i < quota; ++i) {
    if (!s.pending) {
      if (!s.cursor->next_view(&s.record)) {  // views into the cursor: no copy
        if (s.cursor->paused()) return Step::kContinue;
        break;
      }
      s.pending = true;
    }
    const auto& r = s.record;
    if (s.allow && !s.allow(r.key)) {  // counts toward the quota: bounded work per turn
      s.pending = false;
      ++result->withheld;
      continue;
    }
    // A set whose expiry has passed, not yet deleted by the sweep (which
    // runs in bounded batches, e.g. after a restart or a takeover): not in
    // the map a client is given. An HA peer gets the exact expiry instead.
    bool expired = !s.exact_expiry && has_expired(r, now_ms);
    if (expired && !s.cursor->updates()) {  // counts toward the quota, as withheld keys do
      s.pending = false;
      ++result->expired;
      continue;
    }
    // In a resume, such an update comes as a delete without UUID at its
    // sequence, as one whose key was deleted since (HistoryValues::
    // kResolved); the sweep's delete follows as a KVPUB.
    std::string props = expired ? std::string() : sent_properties(r, now_ms, s.exact_expiry);
    chp::KvMsgFrames frames =
        expired ? chp::KvMsgFrames(r.key, r.entry.sequence, {}, {}, {})
                : chp::KvMsgFrames(r.key, r.entry.sequence, r.entry.uuid,
                                   props.empty() ? std::string_view(r.entry.properties) : std::string_view(props),
                                   r.entry.value);
    switch (try_send(router, frames.frames(), s.identity)) {
      case SendOutcome::kWouldBlock:
        return Step::kBlocked;
      case SendOutcome::kUnroutable:
        return Step::kAborted;
      case SendOutcome::kSent:
        break;
    }
    sent(s, r.key.size() + r.entry.uuid.size() + (props.empty() ? r.entry.properties.size() : props.size()) +
                r.entry.value.size() + 64);
    s.pending = false;
    ++result->keys_sent;
  }
  if (s.pending) return Step::kContinue;
  // The cursor may still have records: a full quota was sent.
  if (s.cursor->next_view(&s.record)) {
    s.pending = true;
    return Step::kContinue;
  }
  return finish(router, s);
}

SnapshotPump::Step SnapshotPump::finish(zmq::socket_t& router, Session& s) {
  if (s.cursor->paused()) return Step::kContinue;
  if (!s.cursor->status().ok()) {
    spdlog::error("snapshot aborted: {}", s.cursor->status().message());
    return Step::kAborted;
  }
  switch (try_send(router, chp::encode_kthxbai({s.cursor->sequence(), s.subtree, s.kthxbai_properties}), s.identity)) {
    case SendOutcome::kWouldBlock:
      return Step::kBlocked;
    case SendOutcome::kUnroutable:
      return Step::kAborted;
    case SendOutcome::kSent:
      return Step::kDone;
  }
  return Step::kAborted;
}

void SnapshotPump::sent(Session& s, std::size_t bytes) {
  if (fair_.pipe_messages == 0) return;
  auto b = static_cast<std::uint32_t>(std::min<std::size_t>(bytes, UINT32_MAX));
  if (s.sizes.size() < fair_.pipe_messages) {
    s.sizes.push_back(b);
  } else {
    s.in_flight -= s.sizes[s.next_size];
    in_flight_ -= s.sizes[s.next_size];
    s.sizes[s.next_size] = b;
    s.next_size = (s.next_size + 1) % s.sizes.size();
  }
  s.in_flight += b;
  in_flight_ += b;
}

std::size_t SnapshotPump::small_sessions() const {
  return static_cast<std::size_t>(
      std::count_if(sessions_.begin(), sessions_.end(), [](const Session& s) { return s.small; }));
}

bool SnapshotPump::ready() const {
  for (const auto& s : sessions_) {
    if (!s.blocked) return true;
  }
  return false;
}

SnapshotPump::Result SnapshotPump::pump(zmq::socket_t& router, std::size_t budget, std::uint64_t now_ms,
                                        Clock::time_point now) {
  Result result;
  last_now_ = now;
  result.evicted = std::exchange(evicted_, 0);
  if (sessions_.empty()) return result;
  // Over the byte budget: the sessions paused longest give their slots up.
  while (in_flight_ > fair_.budget_bytes && evict_paused(nullptr, now)) ++result.evicted;
  evicted_ = 0;
  // The budget is shared by the sessions that could send last time: one
  // paused on a full pipe tries a single message.
  std::size_t ordinary = 0;
  for (const auto& s : sessions_) ordinary += s.priority || s.small || s.blocked ? 0 : 1;
  std::size_t quota = std::max<std::size_t>(1, budget / std::max<std::size_t>(1, ordinary));
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    std::size_t sent_before = result.keys_sent;
    Step st = step(router, *it, it->priority || it->small ? budget : it->blocked ? 1 : quota, now_ms, &result);
    if (result.keys_sent > sent_before) it->progress_at = now;
    it->blocked = st == Step::kBlocked;
    if (it->blocked && stall_.count() > 0 && now - it->progress_at >= stall_) {
      ++result.stalled;
      note_unread(it->identity, now);
      it = erase(it);  // releases the cursor and its snapshot
      continue;
    }
    result.blocked |= it->blocked;
    if (st == Step::kDone || st == Step::kAborted) {
      (st == Step::kDone ? result.completed : result.aborted)++;
      unread_.erase(it->identity);  // read to the end, or gone
      it = erase(it);
    } else {
      ++it;
    }
  }
  return result;
}

}  // namespace zstore::server
