// ChpServer's snapshot port: ICANHAZ? (full, subtree, resume) and the
// requests sharing the port (history, confirmed writes, the pair's), and
// the pump that streams admitted snapshots a slice a turn.
#include <spdlog/spdlog.h>

#include "protocol/chp_codec.h"
#include "protocol/chp_key_history.h"
#include "protocol/chp_writes.h"
#include "server/chp/chp_server.h"

namespace zstore::server {

namespace chp = protocol::chp;

void ChpServer::serve_snapshot_requests() {
  ReceivedMessage msg;
  for (int i = 0; i < 256 && try_recv(router_, &msg); ++i) {
    if (msg.views.empty()) continue;
    std::string identity(msg.views[0]);
    if (msg.views.size() >= 2 && msg.views[1] == chp::kWriteCommand) {
      take_write(identity, msg);
      continue;
    }
    if (msg.views.size() >= 2 && msg.views[1] == kPeerAckCommand) {
      if (may_ask_as_peer(msg, msg.views[1])) take_peer_ack(msg);
      continue;
    }
    if (msg.views.size() >= 2 && msg.views[1] == chp::kHistoryCommand) {
      serve_history(identity, msg);
      continue;
    }
    bool reconcile = msg.views.size() >= 2 && msg.views[1] == kReconcileCommand;
    // The HA follower's request: an ICANHAZ? whose reply keeps exact expiries.
    bool peer = msg.views.size() >= 2 && msg.views[1] == chp::kPeerSnapshot;
    bool catchup = msg.views.size() >= 2 && msg.views[1] == chp::kPeerCatchup;
    if ((reconcile || peer || catchup) && !may_ask_as_peer(msg, msg.views[1])) continue;
    if (reconcile) {
      serve_reconcile(identity, msg);  // the HA peer's; answered in any state
      continue;
    }
    if (catchup) {
      serve_catchup(identity, msg);
      continue;
    }
    serve_icanhaz(identity, msg, peer);
  }
  commit_write_requests();
}

// An ICANHAZ? (peer: the HA follower's PEERSNAPSHOT?, already checked to
// come from the peer): a session of the snapshot pump, or refused.
void ChpServer::serve_icanhaz(const std::string& identity, const ReceivedMessage& msg, bool peer) {
  std::vector<std::string_view> frames(msg.views.begin() + 1, msg.views.end());
  if (peer) frames[0] = chp::kIcanhaz;
  auto req = chp::decode_icanhaz(frames, config_.limits);
  if (!req) {
    report_malformed("snapshot request", req.error());
    return;
  }
  if (!holds_subtree(req->subtree)) return;  // never a silently partial map: the client fails over
  if (!accept_vote()) return;                // a non-active server ignores clients: they fail over
  // A client that names its last sequence gets only what came after it,
  // when our history holds that (docs/chp-extensions.md, "Resume").
  // The cursor is made only once the request has a slot (SnapshotPump).
  auto open = [&] {
    publish_unsynced_now();  // the cursor reads only what clients were sent
    std::unique_ptr<storage::ChpSnapshotCursor> cursor;
    if (req->resume_after && !peer) cursor = resume_cursor(*req->resume_after, req->subtree);
    bool resumed = cursor != nullptr;
    if (!cursor) cursor = store_.snapshot(req->subtree);
    return SnapshotPump::Opened{std::move(cursor), kthxbai_properties(resumed)};
  };
  std::string group = snapshot_group(msg);
  // Only a plain snapshot's size is known before it is read (a resume's
  // is that of the history after its sequence).
  SnapshotPump::SmallAnswer small;
  if (!peer && !req->resume_after) {
    small = [&] { return store_.approximate_bytes(req->subtree) <= SnapshotPump::kSmallAnswerBytes; };
  }
  if (!snapshots_.start(identity, req->subtree, open, peer, read_filter(msg), peer, group, small)) {
    metrics_.snapshots_refused.fetch_add(1, std::memory_order_relaxed);
    bad_input_log_.log(spdlog::level::warn,
                       "snapshot request from {} refused: its share of the snapshot slots, every slot or the "
                       "snapshot byte budget is taken by clients still reading",
                       group);
  }
}

// The updates after `after`, when the history holds them and they are no
// more than the map's keys (or kResumeAlways): a longer history costs more
// to read and send than the snapshot that replaces it (a client far behind
// a few hot keys).
std::unique_ptr<storage::ChpSnapshotCursor> ChpServer::resume_cursor(std::uint64_t after, std::string_view subtree) {
  constexpr std::uint64_t kResumeAlways = 1024;
  std::unique_ptr<storage::ChpSnapshotCursor> cursor;
  if (storage::sequences_after(store_.epochs(), after) <= std::max(store_.live_keys(), kResumeAlways)) {
    cursor = store_.resume_after(after, subtree);
  }
  (cursor ? metrics_.resumes : metrics_.resumes_declined).fetch_add(1, std::memory_order_relaxed);
  return cursor;
}

void ChpServer::pump_snapshots() {
  if (!snapshots_.active()) {
    metrics_.snapshot_bytes_in_flight.store(0, std::memory_order_relaxed);
    return;
  }
  auto r = snapshots_.pump(router_, config_.snapshot_slice, config_.now_ms());
  metrics_.snapshot_keys_sent.fetch_add(r.keys_sent, std::memory_order_relaxed);
  metrics_.acl_withheld_snapshot_keys.fetch_add(r.withheld, std::memory_order_relaxed);
  metrics_.snapshot_keys_expired.fetch_add(r.expired, std::memory_order_relaxed);
  metrics_.snapshots_served.fetch_add(r.completed, std::memory_order_relaxed);
  metrics_.snapshots_evicted.fetch_add(r.evicted, std::memory_order_relaxed);
  metrics_.snapshot_bytes_in_flight.store(snapshots_.bytes_in_flight(), std::memory_order_relaxed);
  if (r.stalled > 0) {
    metrics_.snapshots_stalled.fetch_add(r.stalled, std::memory_order_relaxed);
    bad_input_log_.log(spdlog::level::warn,
                       "dropped {} snapshot(s) whose client read nothing for {} ms (--snapshot-stall-ms)", r.stalled,
                       config_.snapshot_stall.count());
  }
}

}  // namespace zstore::server
