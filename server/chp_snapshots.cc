#include "server/chp_snapshots.h"

#include <spdlog/spdlog.h>

#include "protocol/chp_codec.h"
#include "server/zmq_frames.h"

namespace zstore::server {

namespace chp = protocol::chp;

bool SnapshotPump::start(std::string identity, std::string subtree,
                         std::unique_ptr<storage::ChpSnapshotCursor> cursor) {
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    if (it->identity == identity) {
      sessions_.erase(it);
      break;
    }
  }
  if (sessions_.size() >= max_sessions_) return false;
  sessions_.push_back(Session{std::move(identity), std::move(subtree), std::move(cursor), std::nullopt, false});
  return true;
}

SnapshotPump::Step SnapshotPump::step(zmq::socket_t& router, Session& s, std::size_t quota, std::size_t* sent) {
  for (std::size_t i = 0; i < quota; ++i) {
    if (!s.pending) {
      storage::ChpRecord record;
      if (!s.cursor->next(&record)) break;
      s.pending = std::move(record);
    }
    const auto& r = *s.pending;
    auto frames = chp::encode_kvmsg({r.key, r.entry.sequence, r.entry.uuid, r.entry.properties, r.entry.value});
    switch (try_send(router, frames, s.identity)) {
      case SendOutcome::kWouldBlock: return Step::kBlocked;
      case SendOutcome::kUnroutable: return Step::kAborted;
      case SendOutcome::kSent: break;
    }
    s.pending.reset();
    ++*sent;
  }
  if (s.pending) return Step::kContinue;
  // The cursor may still have records: a full quota was sent.
  storage::ChpRecord record;
  if (s.cursor->next(&record)) {
    s.pending = std::move(record);
    return Step::kContinue;
  }
  if (!s.cursor->status().ok()) {
    spdlog::error("snapshot aborted: {}", s.cursor->status().message());
    return Step::kAborted;
  }
  switch (try_send(router, chp::encode_kthxbai({s.cursor->sequence(), s.subtree}), s.identity)) {
    case SendOutcome::kWouldBlock: return Step::kBlocked;
    case SendOutcome::kUnroutable: return Step::kAborted;
    case SendOutcome::kSent: return Step::kDone;
  }
  return Step::kAborted;
}

SnapshotPump::Result SnapshotPump::pump(zmq::socket_t& router, std::size_t budget) {
  Result result;
  if (sessions_.empty()) return result;
  std::size_t quota = std::max<std::size_t>(1, budget / sessions_.size());
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    std::size_t sent = 0;
    Step st = step(router, *it, quota, &sent);
    result.keys_sent += sent;
    it->blocked = st == Step::kBlocked;
    result.blocked |= it->blocked;
    if (st == Step::kDone || st == Step::kAborted) {
      (st == Step::kDone ? result.completed : result.aborted)++;
      it = sessions_.erase(it);
    } else {
      ++it;
    }
  }
  return result;
}

}  // namespace zstore::server
