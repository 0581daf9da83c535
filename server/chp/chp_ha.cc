#include "server/chp/chp_ha.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "protocol/byte_order.h"
#include "protocol/endpoint.h"
#include "server/reactor/zmq_frames.h"

namespace zstore::server {

namespace {
constexpr auto kReconcileRetry = std::chrono::seconds(1);
}  // namespace

ChpHa::ChpHa(zmq::context_t& ctx, storage::ChpStore& store, HaConfig config, ChpHaSettings settings,
             ChpMetrics& metrics, Poller& poller, ChpHaHost& host, std::atomic<HaState>& state)
    : ctx_(ctx),
      store_(store),
      config_(std::move(config)),
      settings_(std::move(settings)),
      metrics_(metrics),
      poller_(poller),
      host_(host),
      link_(ctx, config_.bind, config_.peer, config_.cut_file, settings_.security),
      bstar_(config_.role, 2 * config_.heartbeat, Clock::now()),
      published_state_(state),
      pair_token_(new_pair_token()),
      pending_(1'000'000, 1'000'000, settings_.receive_budget_bytes),
      write_acks_(2 * config_.heartbeat) {
  published_state_ = config_.role;
  resolve_peer_addresses();
  poller_.add(
      link_.subscriber(), [this] { handle_peer_state(); }, kPeerState);
}

ChpHa::~ChpHa() {
  stop_following();
  (void)end_reconcile();
  poller_.remove(link_.subscriber());
}

bool ChpHa::accept_vote() {
  HaState before = bstar_.state();
  std::string_view reason;
  bool accepted = bstar_.on_client_vote(store_.synced(), Clock::now(), &reason);
  if (bstar_.state() != before) enter(before, bstar_.state());
  accepted = accepted && bstar_.active();  // entering may have failed
  if (!accepted) {
    bad_input_log_.log(spdlog::level::info, "HA: snapshot request ignored: {}", reason);
  }
  return accepted;
}

void ChpHa::after_dispatch() {
  if (follower_) {
    follower_->on_timer();
    metrics_.last_sequence = store_.last_sequence();  // a passive's progress, on /metrics too
  }
  acknowledge_active();
  release_acked_writes();
  // The hand-over (chp_reconciler.h): the active takes what only the peer
  // has; a passive starts following only once nothing of its own would be
  // lost.
  if (bstar_.state() == HaState::kPassive && !follower_ && handed_over() && peer_knows_us()) start_following();
  if (reconciler_ && reconciler_->on_timer() == ChpReconciler::Progress::kFailed) drop_reconcile(reconciler_->why());
  if (reconciler_ && reconciler_->received()) step_reconcile();
  maybe_reconcile();
}

ChpHa::Clock::time_point ChpHa::next_deadline(Clock::time_point bound) const {
  auto next = std::min(bound, next_beat_);
  if (auto held = write_acks_.next_deadline()) next = std::min(next, *held);
  return next;
}

void ChpHa::hold_pending(std::span<storage::ChpWrite> writes) {
  for (auto& w : writes) pending_.add(std::move(w));
}

void ChpHa::note_client_writes(std::span<const storage::ChpWrite> writes) {
  if (!reconciler_) return;
  for (const auto& w : writes) reconciler_->note_client_write(w.key);
}

void ChpHa::handle_peer_state() {
  std::uint64_t malformed = 0;
  while (auto peer = link_.receive(&malformed)) on_peer(*peer);
  if (malformed) metrics_.malformed.count(protocol::DecodeErrorKind::kBadField);
}

void ChpHa::on_peer(const HaPeerState& peer) {
  if (!peer_ || peer_->state != peer.state || peer_->map.synced != peer.map.synced) {
    spdlog::info("HA: peer is {} ({}, last sequence {})", to_string(peer.state),
                 peer.map.synced ? "synced" : "not synced", peer.map.last);
  }
  peer_ = peer;
  max_peer_last_ = std::max(max_peer_last_, peer.map.last);
  HaState before = bstar_.state();
  HaState after = bstar_.on_peer_state(peer.state, peer.map, own_map(), Clock::now());
  if (after != before) enter(before, after);
  // The peer published above us (both were active): our next sequences
  // must exceed everything it published.
  if (bstar_.active() && peer.map.last > store_.last_sequence()) {
    spdlog::warn("HA: peer is at sequence {}, above our {}: starting a new epoch", peer.map.last,
                 store_.last_sequence());
    std::uint64_t salt = bstar_.role() == HaState::kBackup ? (1ull << 21) : 0;
    if (auto s = store_.begin_epoch(peer.map.last, settings_.now_ms(), salt); !s.ok()) {
      spdlog::error("HA: cannot start a new epoch: {}", s.message());
    }
  }
}

void ChpHa::enter(HaState from, HaState to) {
  spdlog::info("HA: {} -> {} (our map: {}, last sequence {})", to_string(from), to_string(to),
               store_.synced() ? "synced" : "not synced", store_.last_sequence());
  if (to == HaState::kActive && !become_active()) {
    bstar_.abandon_active();
    to = bstar_.state();
    spdlog::error("HA: could not become active; back to {}", to_string(to));
  }
  published_state_ = to;
  if (to != HaState::kActive) {
    (void)end_reconcile();
    write_acks_.reset();  // the held replies' writers learn nothing: unknown, retried on the other
  }
  if (to == HaState::kPassive) {
    host_.drop_snapshots();  // a passive serves nobody
    stop_following();        // after_dispatch starts it once nothing of ours would be lost
  }
  next_beat_ = Clock::now();  // tell the peer at once
}

bool ChpHa::become_active() {
  stop_following();
  // A new epoch: our sequences exceed anything the previous active
  // published, even what we never received and never heard of (a clock).
  std::uint64_t salt = bstar_.role() == HaState::kBackup ? (1ull << 21) : 0;
  if (auto s = store_.begin_epoch(max_peer_last_, settings_.now_ms(), salt); !s.ok()) {
    spdlog::error("HA: cannot start a new epoch: {}", s.message());
    return false;
  }
  write_acks_.reset();
  auto writes = pending_.take_all();
  spdlog::info("HA: active from sequence {}, applying {} pending update(s)", store_.last_sequence(), writes.size());
  host_.commit_and_publish(writes);
  // What expired while the old active was gone is deleted over the next
  // turns, in bounded batches; snapshots leave it out meanwhile.
  host_.sweep_expiries_now();
  host_.hugz_now();
  reconciled_ = 0;
  return true;
}

void ChpHa::send_state() {
  auto now = Clock::now();
  if (now < next_beat_) return;
  next_beat_ = now + config_.heartbeat;
  HaPeerState me;
  me.state = bstar_.state();
  me.has_facts = true;
  me.map = own_map();
  me.epochs = store_.epochs();
  me.reconciled = reconciled_;
  me.pair_token = pair_token_;
  if (peer_) me.heard_token = peer_->pair_token;
  link_.send_state(me);
}

// Without CURVE: whether the peer's state says it knows our pair token
// (before we ask it anything, so that it does not refuse us). With: true.
bool ChpHa::peer_knows_us() const { return settings_.security.curve() || (peer_ && peer_->heard_token == pair_token_); }

// Whether a passive may replace its map: it is incomplete anyway, holds
// nothing past what it shares with the active, or the active took it over.
bool ChpHa::handed_over() const {
  if (!peer_ || peer_->state != HaState::kActive) return false;
  if (!store_.synced() || !peer_->has_facts) return true;
  std::uint64_t last = store_.last_sequence();
  return storage::common_point(store_.epochs(), peer_->epochs) >= last || peer_->reconciled >= last;
}

void ChpHa::start_following() {
  spdlog::info("HA: following the active at {} (our last sequence {}, handed over)", config_.peer_chp,
               store_.last_sequence());
  follower_ =
      std::make_unique<ChpFollower>(ctx_, store_, pending_, config_.peer_chp, settings_.limits, settings_.now_ms,
                                    settings_.security, settings_.receive_budget_bytes, pair_token_);
  // A retry of a write we stored from the active, sent to us after a
  // failover, is answered applied, not applied again.
  follower_->on_applied([this](std::span<const storage::ChpWrite> applied) {
    for (const auto& w : applied) host_.remember_applied(w);
  });
  store_.remember_every_outcome(true);  // and after a restart of ours
  ack_sent_ = 0;
  ChpFollower* f = follower_.get();
  poller_.add(
      f->snapshot_socket(), [f] { f->on_snapshot_socket(); }, kFollower);
  poller_.add(
      f->update_socket(), [f] { f->on_update_socket(); }, kFollower);
  f->start();
}

// Its sockets leave the poller first: a handler that ends the follower
// during a turn leaves nothing of it to dispatch.
void ChpHa::stop_following() {
  if (!follower_) return;
  poller_.remove(follower_->snapshot_socket());
  poller_.remove(follower_->update_socket());
  follower_.reset();
  store_.remember_every_outcome(false);
}

void ChpHa::maybe_reconcile() {
  if (!bstar_.active() || reconciler_ || !peer_ || !peer_->has_facts) return;
  if (peer_->state == HaState::kActive || !peer_->map.synced || !peer_knows_us()) return;
  std::uint64_t common = storage::common_point(store_.epochs(), peer_->epochs);
  if (common >= peer_->map.last || reconciled_ >= peer_->map.last) return;
  if (Clock::now() < next_reconcile_) return;
  spdlog::info("HA: taking over what the peer applied after sequence {} (its last is {})", common, peer_->map.last);
  start_reconcile(std::make_unique<ChpReconciler>(ctx_, config_.peer_chp, common, settings_.limits, settings_.now_ms,
                                                  settings_.security, settings_.receive_budget_bytes, pair_token_));
}

void ChpHa::start_reconcile(std::unique_ptr<ChpReconciler> reconciler) {
  reconciler_ = std::move(reconciler);
  poller_.add(
      reconciler_->socket(), [this] { on_reconciler_socket(); }, kReconciler);
  reconciler_->start();
}

// Its socket leaves the poller first, as the follower's does.
std::unique_ptr<ChpReconciler> ChpHa::end_reconcile() {
  if (reconciler_) poller_.remove(reconciler_->socket());
  return std::move(reconciler_);
}

void ChpHa::on_reconciler_socket() {
  if (reconciler_->on_socket() == ChpReconciler::Progress::kFailed) drop_reconcile(reconciler_->why());
}

// why may be the reconciler's own why(): logged before it is destroyed.
void ChpHa::drop_reconcile(const std::string& why) {
  handover_failure_log_.log(spdlog::level::warn, "HA: hand-over from the peer failed, retrying: {}", why);
  (void)end_reconcile();
  next_reconcile_ = Clock::now() + kReconcileRetry;
}

// Applies the next part of what the peer's side of a hand-over gives us
// (ChpReconciler::step), once per turn until it is all in.
void ChpHa::step_reconcile() {
  std::vector<storage::ChpWrite> writes;
  auto progress = reconciler_->step(store_, &writes);
  if (progress == ChpReconciler::Progress::kFailed) return drop_reconcile(reconciler_->why());
  // A client whose confirmed write the peer applied and never answered
  // retries it here: answered applied at the sequence it gets now.
  for (auto& w : writes) w.remember_outcome = true;
  for (std::size_t i = 0; i < writes.size(); i += settings_.max_batch) {
    auto first = writes.begin() + static_cast<std::ptrdiff_t>(i);
    auto end = writes.begin() + static_cast<std::ptrdiff_t>(std::min(writes.size(), i + settings_.max_batch));
    if (!host_.commit_and_publish(std::span<storage::ChpWrite>(first, end))) return drop_reconcile("not fully written");
    for (auto it = first; it != end; ++it) host_.remember_applied(*it);
  }
  metrics_.handed_over.fetch_add(writes.size(), std::memory_order_relaxed);
  host_.sweep_expiries_now();  // what ran out while the peer held it (snapshots leave it out meanwhile)
  if (progress == ChpReconciler::Progress::kRunning) return;
  auto r = end_reconcile();
  next_reconcile_ = Clock::now() + kReconcileRetry;
  if (!r->complete()) {
    metrics_.handovers_incomplete.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("HA: the peer's history did not reach back to sequence {}: its deletes after it are not taken over",
                 r->after());
  }
  reconciled_ = r->peer_last();
  spdlog::info("HA: took over {} update(s) from the peer up to its sequence {}; now at {}", r->given(), reconciled_,
               store_.last_sequence());
  next_beat_ = Clock::now();  // the peer waits for this to resync
}

void ChpHa::acknowledge_active() {
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
  next_ack_ = now + config_.heartbeat;
}

void ChpHa::take_peer_ack(std::uint64_t sequence) {
  if (!bstar_.active()) return;
  write_acks_.acknowledged(sequence, Clock::now());
}

bool ChpHa::hold_reply(ChpWriteRequests::Reply& reply) {
  auto now = Clock::now();
  if (reply.outcome.kind != protocol::chp::WriteOutcome::Kind::kApplied || !bstar_.active() ||
      reply.outcome.sequence <= write_acks_.acknowledged() || !write_acks_.joined(now)) {
    return false;
  }
  write_acks_.hold(std::move(reply), now);
  return true;
}

void ChpHa::release_acked_writes() {
  if (write_acks_.empty()) return;
  std::uint64_t timed_out = 0;
  for (const auto& r : write_acks_.due(Clock::now(), &timed_out)) host_.send_written(r);
  if (timed_out > 0) {
    ack_timeout_log_.log(spdlog::level::warn,
                         "HA: the passive did not acknowledge {} write(s) within {} ms (it stored up to sequence "
                         "{}): answered after our own commit, as when alone, until it catches up",
                         timed_out, 2 * config_.heartbeat.count(), write_acks_.acknowledged());
  }
}

bool ChpHa::from_peer(std::string_view routing_id, const std::string& address, std::string* why) {
  if (!peer_ || peer_->pair_token.empty()) {
    *why = "the HA peer's state was not heard yet";
    return false;
  }
  if (pair_token_of(routing_id) != peer_->pair_token) {
    *why = "not on a connection named with the HA peer's pair token";
    return false;
  }
  auto known = [&] {
    return std::find(peer_addresses_.begin(), peer_addresses_.end(), address) != peer_addresses_.end();
  };
  if (!known() && Clock::now() - peer_addresses_at_ >= std::chrono::seconds(5)) resolve_peer_addresses();
  if (known()) return true;
  *why = "not from an address of the configured peer host";
  return false;
}

// The addresses of the configured peer's hosts (--ha-peer-chp, --ha-peer).
void ChpHa::resolve_peer_addresses() {
  peer_addresses_.clear();
  peer_addresses_at_ = Clock::now();
  for (const std::string& endpoint : {config_.peer_chp, config_.peer}) {
    auto hp = protocol::parse_tcp_endpoint(endpoint);
    if (!hp) continue;
    std::string host = hp->host;
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0) {
      peer_log_.log(spdlog::level::warn, "HA: cannot resolve the peer host '{}': {}", host, gai_strerror(rc));
      continue;
    }
    for (addrinfo* a = found; a; a = a->ai_next) {
      char text[INET6_ADDRSTRLEN] = {};
      const void* in = a->ai_family == AF_INET
                           ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr)
                           : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr);
      if (inet_ntop(a->ai_family, in, text, sizeof text)) peer_addresses_.emplace_back(text);
    }
    freeaddrinfo(found);
  }
}

}  // namespace zstore::server
