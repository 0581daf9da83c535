// ChpServer's Binary Star side: state messages, votes, takeover and the
// hand-over between the members (docs/operations.md, "High availability").
#include <spdlog/spdlog.h>

#include "protocol/byte_order.h"
#include "protocol/chp_key_history.h"
#include "server/chp/chp_server.h"

namespace zstore::server {

namespace chp = protocol::chp;

namespace {
constexpr auto kReconcileRetry = std::chrono::seconds(1);
}  // namespace

bool ChpServer::accept_vote() {
  if (config_.replica) return replica_has_map();  // a replica loading its map serves nobody
  if (!bstar_) return true;
  HaState before = bstar_->state();
  std::string_view reason;
  bool accepted = bstar_->on_client_vote(store_.synced(), Clock::now(), &reason);
  if (bstar_->state() != before) enter(before, bstar_->state());
  accepted = accepted && bstar_->active();  // entering may have failed
  if (!accepted) {
    bad_input_log_.log(spdlog::level::info, "HA: snapshot request ignored: {}", reason);
  }
  return accepted;
}

void ChpServer::handle_peer_state() {
  std::uint64_t malformed = 0;
  while (auto peer = ha_link_->receive(&malformed)) on_peer(*peer);
  if (malformed) metrics_.malformed.count(protocol::DecodeErrorKind::kBadField);
}

void ChpServer::on_peer(const HaPeerState& peer) {
  if (!peer_ || peer_->state != peer.state || peer_->map.synced != peer.map.synced) {
    spdlog::info("HA: peer is {} ({}, last sequence {})", to_string(peer.state),
                 peer.map.synced ? "synced" : "not synced", peer.map.last);
  }
  peer_ = peer;
  max_peer_last_ = std::max(max_peer_last_, peer.map.last);
  HaState before = bstar_->state();
  HaState after = bstar_->on_peer_state(peer.state, peer.map, own_map(), Clock::now());
  if (after != before) enter(before, after);
  // The peer published above us (both were active): our next sequences
  // must exceed everything it published.
  if (bstar_->active() && peer.map.last > store_.last_sequence()) {
    spdlog::warn("HA: peer is at sequence {}, above our {}: starting a new epoch", peer.map.last,
                 store_.last_sequence());
    std::uint64_t salt = bstar_->role() == HaState::kBackup ? (1ull << 21) : 0;
    if (auto s = store_.begin_epoch(peer.map.last, config_.now_ms(), salt); !s.ok()) {
      spdlog::error("HA: cannot start a new epoch: {}", s.message());
    }
  }
}

void ChpServer::enter(HaState from, HaState to) {
  spdlog::info("HA: {} -> {} (our map: {}, last sequence {})", to_string(from), to_string(to),
               store_.synced() ? "synced" : "not synced", store_.last_sequence());
  if (to == HaState::kActive && !become_active()) {
    bstar_->abandon_active();
    to = bstar_->state();
    spdlog::error("HA: could not become active; back to {}", to_string(to));
  }
  published_state_ = to;
  if (to != HaState::kActive) {
    reconciler_.reset();
    write_acks_.reset();  // the held replies' writers learn nothing: unknown, retried on the other
  }
  if (to == HaState::kPassive) {
    snapshots_.clear();  // a passive serves nobody
    follower_.reset();   // ha_tick starts it once nothing of ours would be lost
  }
  next_ha_beat_ = Clock::now();  // tell the peer at once
}

bool ChpServer::become_active() {
  follower_.reset();
  // A new epoch: our sequences exceed anything the previous active
  // published, even what we never received and never heard of (a clock).
  std::uint64_t salt = bstar_->role() == HaState::kBackup ? (1ull << 21) : 0;
  if (auto s = store_.begin_epoch(max_peer_last_, config_.now_ms(), salt); !s.ok()) {
    spdlog::error("HA: cannot start a new epoch: {}", s.message());
    return false;
  }
  write_acks_.reset();
  auto writes = pending_.take_all();
  spdlog::info("HA: active from sequence {}, applying {} pending update(s)", store_.last_sequence(), writes.size());
  commit_and_publish(writes);
  // What expired while the old active was gone is deleted over the next
  // turns, in bounded batches; snapshots leave it out meanwhile.
  sweep_expiries_now();
  last_hugz_ = Clock::time_point{};  // HUGZ now: clients looking for the active find us
  reconciled_ = 0;
  return true;
}

void ChpServer::send_ha_state() {
  if (!ha_link_) return;
  auto now = Clock::now();
  if (now < next_ha_beat_) return;
  next_ha_beat_ = now + config_.ha->heartbeat;
  HaPeerState me;
  me.state = bstar_->state();
  me.has_facts = true;
  me.map = own_map();
  me.epochs = store_.epochs();
  me.reconciled = reconciled_;
  me.pair_token = pair_token_;
  if (peer_) me.heard_token = peer_->pair_token;
  ha_link_->send_state(me);
}

std::string ChpServer::kthxbai_properties(bool resumed) const {
  std::vector<chp::Property> props{{std::string(chp::kEpochsProperty), storage::format_epochs(store_.epochs())}};
  if (store_.history_from() != UINT64_MAX && store_.keeps_history()) {
    props.emplace_back(chp::kHistoryFromProperty, std::to_string(store_.history_from()));
  }
  if (resumed) props.emplace_back(chp::kResumedProperty, "1");
  if (replica_stale()) {  // docs/replicas.md: the map may be older than the upstream's
    auto silent = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - follower_->last_heard());
    props.emplace_back(chp::kStaleProperty, std::to_string(silent.count()));
  }
  props.emplace_back(chp::kWritesProperty, "1");  // takes WRITE? (protocol/chp_writes.h)
  // HISTORY? (chp_key_history.h): only with --chp-key-history.
  if (store_.keeps_key_history()) props.emplace_back(chp::kKeyHistoryProperty, "1");
  return chp::format_properties(props);
}

// Whether a passive may replace its map: it is incomplete anyway, holds
// nothing past what it shares with the active, or the active took it over.
bool ChpServer::handed_over() const {
  if (!peer_ || peer_->state != HaState::kActive) return false;
  if (!store_.synced() || !peer_->has_facts) return true;
  std::uint64_t last = store_.last_sequence();
  return storage::common_point(store_.epochs(), peer_->epochs) >= last || peer_->reconciled >= last;
}

void ChpServer::ha_tick() {
  if (bstar_->state() == HaState::kPassive && !follower_ && handed_over() && peer_knows_us()) {
    spdlog::info("HA: following the active at {} (our last sequence {}, handed over)", config_.ha->peer_chp,
                 store_.last_sequence());
    follower_ = std::make_unique<ChpFollower>(ctx_, store_, pending_, config_.ha->peer_chp, config_.limits,
                                              config_.now_ms, config_.security, config_.receive_budget_bytes,
                                              pair_token_);
    // A retry of a write we stored from the active, sent to us after a
    // failover, is answered applied, not applied again.
    follower_->on_applied([this](std::span<const storage::ChpWrite> applied) {
      for (const auto& w : applied) write_requests_.remember_applied(w.uuid, w.sequence);
    });
    ack_sent_ = 0;
    follower_->start();
  }
  if (reconciler_ && reconciler_->on_timer() == ChpReconciler::Progress::kFailed) drop_reconcile(reconciler_->why());
  if (reconciler_ && reconciler_->received()) step_reconcile();
  maybe_reconcile();
}

void ChpServer::maybe_reconcile() {
  if (!bstar_->active() || reconciler_ || !peer_ || !peer_->has_facts) return;
  if (peer_->state == HaState::kActive || !peer_->map.synced || !peer_knows_us()) return;
  std::uint64_t common = storage::common_point(store_.epochs(), peer_->epochs);
  if (common >= peer_->map.last || reconciled_ >= peer_->map.last) return;
  if (Clock::now() < next_reconcile_) return;
  spdlog::info("HA: taking over what the peer applied after sequence {} (its last is {})", common, peer_->map.last);
  reconciler_ = std::make_unique<ChpReconciler>(ctx_, config_.ha->peer_chp, common, config_.limits, config_.now_ms,
                                                 config_.security, config_.receive_budget_bytes, pair_token_);
  reconciler_->start();
}

// why may be the reconciler's own why(): logged before it is destroyed.
void ChpServer::drop_reconcile(const std::string& why) {
  handover_failure_log_.log(spdlog::level::warn, "HA: hand-over from the peer failed, retrying: {}", why);
  reconciler_.reset();
  next_reconcile_ = Clock::now() + kReconcileRetry;
}

void ChpServer::step_reconcile() {
  std::vector<storage::ChpWrite> writes;
  auto progress = reconciler_->step(store_, &writes);
  if (progress == ChpReconciler::Progress::kFailed) return drop_reconcile(reconciler_->why());
  for (std::size_t i = 0; i < writes.size(); i += config_.max_batch) {
    auto first = writes.begin() + static_cast<std::ptrdiff_t>(i);
    auto end = writes.begin() + static_cast<std::ptrdiff_t>(std::min(writes.size(), i + config_.max_batch));
    if (!commit_and_publish(std::span<storage::ChpWrite>(first, end))) return drop_reconcile("not fully written");
  }
  metrics_.handed_over.fetch_add(writes.size(), std::memory_order_relaxed);
  sweep_expiries_now();  // what ran out while the peer held it (snapshots leave it out meanwhile)
  if (progress == ChpReconciler::Progress::kRunning) return;
  auto r = std::move(reconciler_);
  next_reconcile_ = Clock::now() + kReconcileRetry;
  if (!r->complete()) {
    metrics_.handovers_incomplete.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("HA: the peer's history did not reach back to sequence {}: its deletes after it are not taken over",
                 r->after());
  }
  reconciled_ = r->peer_last();
  spdlog::info("HA: took over {} update(s) from the peer up to its sequence {}; now at {}", r->given(), reconciled_,
               store_.last_sequence());
  next_ha_beat_ = Clock::now();  // the peer waits for this to resync
}

void ChpServer::serve_reconcile(const std::string& identity, const ReceivedMessage& msg) {
  if (msg.views.size() != 3 || msg.views[2].size() != 8) {
    report_malformed("reconcile request", {protocol::DecodeErrorKind::kFrameCount, "RECONCILE? needs 2 frames"});
    return;
  }
  std::uint64_t after = protocol::get_be<std::uint64_t>(msg.views[2]);
  auto cursor = store_.history_after(after);
  bool complete = cursor != nullptr;
  if (!cursor) cursor = store_.snapshot("");  // the whole map: the peer keeps what came after `after`
  spdlog::info("HA: the peer asks for our updates after sequence {} (our last {}): sending {}", after,
               store_.last_sequence(), complete ? "our history" : "our whole map (history too short)");
  (void)snapshots_.start(identity, "", std::move(cursor), complete ? "complete=1\n" : "complete=0\n", true, {}, true);
}

void ChpServer::acknowledge_active() {
  if (!follower_ || !follower_->following()) return;
  auto now = Clock::now();
  std::uint64_t last = store_.last_sequence();
  if (last == ack_sent_ && now < next_ack_) return;
  std::string sequence;
  protocol::put_be<std::uint64_t>(sequence, last);
  if (try_send(follower_->snapshot_socket(), protocol::Frames{std::string(kPeerAckCommand), std::move(sequence)}) !=
      transport::SendOutcome::kSent) {
    return;  // the active is gone or behind: the next turn tries again
  }
  ack_sent_ = last;
  next_ack_ = now + config_.ha->heartbeat;
}

void ChpServer::take_peer_ack(const ReceivedMessage& msg) {
  if (msg.views.size() != 3 || msg.views[2].size() != 8) {
    report_malformed("write acknowledgement", {protocol::DecodeErrorKind::kFrameCount, "PEERACK needs 2 frames"});
    return;
  }
  if (!bstar_ || !bstar_->active()) return;
  write_acks_.acknowledged(protocol::get_be<std::uint64_t>(msg.views[2]), Clock::now());
}

void ChpServer::answer_write(ChpWriteRequests::Reply reply) {
  auto now = Clock::now();
  if (reply.outcome.kind == chp::WriteOutcome::Kind::kApplied && bstar_ && bstar_->active() &&
      reply.outcome.sequence > write_acks_.acknowledged() && write_acks_.joined(now)) {
    return write_acks_.hold(std::move(reply), now);
  }
  (void)try_send(router_, chp::encode_written(reply.outcome), reply.identity);
}

void ChpServer::release_acked_writes() {
  if (write_acks_.empty()) return;
  std::uint64_t timed_out = 0;
  for (const auto& r : write_acks_.due(Clock::now(), &timed_out)) {
    (void)try_send(router_, chp::encode_written(r.outcome), r.identity);
  }
  if (timed_out > 0) {
    ack_timeout_log_.log(spdlog::level::warn,
                         "HA: the passive did not acknowledge {} write(s) within {} ms (it stored up to sequence "
                         "{}): answered after our own commit, as when alone, until it catches up",
                         timed_out, 2 * config_.ha->heartbeat.count(), write_acks_.acknowledged());
  }
}

namespace {

// What a catch-up the history cannot serve sends before its bare KTHXBAI.
class NothingAfter : public storage::ChpSnapshotCursor {
 public:
  explicit NothingAfter(std::uint64_t sequence) : sequence_(sequence) {}
  std::uint64_t sequence() const override { return sequence_; }
  bool next(storage::ChpRecord*) override { return false; }
  storage::Status status() const override { return storage::Status::Ok(); }

 private:
  std::uint64_t sequence_;
};

}  // namespace

// The follower's catch-up after a gap: a vote like its snapshot request.
void ChpServer::serve_catchup(const std::string& identity, const ReceivedMessage& msg) {
  if (msg.views.size() != 3 || msg.views[2].size() != 8) {
    report_malformed("catch-up request", {protocol::DecodeErrorKind::kFrameCount, "CATCHUP? needs 2 frames"});
    return;
  }
  if (!accept_vote()) return;
  std::uint64_t after = protocol::get_be<std::uint64_t>(msg.views[2]);
  auto cursor = store_.resume_after(after, "");
  bool resumed = cursor != nullptr;
  if (resumed) metrics_.resumes.fetch_add(1, std::memory_order_relaxed);
  if (!cursor) cursor = std::make_unique<NothingAfter>(store_.last_sequence());
  spdlog::info("HA: the passive catches up after sequence {} (our last {}): {}", after, store_.last_sequence(),
               resumed ? "sending our history" : "history too short, it will ask for the whole map");
  (void)snapshots_.start(identity, "", std::move(cursor), kthxbai_properties(resumed), true, {}, true);
}

}  // namespace zstore::server
