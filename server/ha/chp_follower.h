// ChpFollower: a passive server's clone of the active one. It subscribes to
// the active's publisher, asks for a full snapshot, REPLACES the local map
// with it (the map is marked unsynced until KTHXBAI, so a crash mid-way
// never leaves a partial map that could be served), then applies every
// KVPUB with the active's own sequence numbers. A sequence gap (a KVPUB
// or HUGZ above the next sequence: updates lost, e.g. to a full receive
// queue) is caught up from the active's history (CATCHUP?: only the
// updates missed, applied in order, the map stays complete), or with a new
// sync when the history no longer reaches back; an unanswered request
// starts a new sync; it never gives up.
//
// As a read replica (as_replica, docs/replicas.md) it follows its upstream
// as a clone client does: ICANHAZ? for the map, ICANHAZ? with its last
// sequence to resume (held until it is known to be one: applied once
// KTHXBAI says resumed=1; a reply that turns out to be the snapshot the
// upstream sent instead is loaded as one, never asked for again), the next
// upstream of its list after silence, and it hands each applied update to a
// callback that republishes it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "security/curve_socket.h"
#include "protocol/chp_codec.h"
#include "server/ha/chp_pending.h"
#include "server/reactor/receive_budget.h"
#include "storage/chp/chp_store.h"

namespace zstore::server {

class ChpFollower {
 public:
  using Clock = std::chrono::steady_clock;

  // leader: "tcp://host:P" of the active server's CHP ports.
  // receive_budget: bytes each of its receive queues may hold (its high-
  // water marks, receive_budget.h) and the KVPUBs it buffers while syncing;
  // an update lost to a full queue is a sequence gap, which resyncs.
  // pair_token: our HA pair token (ha_link.h); each request then goes on a
  // connection named with it (pair_routing_id), which the leader checks
  // when the pair runs without CURVE. Empty: the socket's own id.
  ChpFollower(zmq::context_t& ctx, storage::ChpStore& store, PendingList& pending, std::string leader,
              protocol::chp::Limits limits, std::function<std::uint64_t()> now_ms,
              security::SocketSecurity security = {}, std::uint64_t receive_budget = kDefaultReceiveBudgetBytes,
              std::string pair_token = {});

  // A read replica's upstreams ("tcp://host:P", the first tried first).
  // silence: how long without a KVPUB or HUGZ before the next upstream is
  // tried. applied: called with every batch of updates once persisted
  // (their upstream sequences). Call before start().
  struct Replica {
    std::vector<std::string> upstreams;
    std::chrono::milliseconds silence{3000};
    std::function<void(std::span<const storage::ChpWrite>)> applied;
    // A subtree replica's prefix (empty: the whole map): it asks for that
    // subtree's snapshot and resumes, subscribes to it (and HUGZ) only, and
    // takes each HUGZ above its sequence as its new sequence (its subtree
    // had no update in between that it did not receive).
    std::string subtree;
  };
  void as_replica(Replica replica);
  // An HA follower's: called with every batch of the active's updates once
  // persisted (KVPUBs and catch-ups; a snapshot's keys are not updates).
  void on_applied(std::function<void(std::span<const storage::ChpWrite>)> applied) { applied_ = std::move(applied); }

  // Connects; a replica whose map is synced resumes after its last
  // sequence, anything else requests a snapshot.
  void start();
  // Socket handlers and the retry timer; call when readable / every turn.
  // A handler reads a bounded number of messages (one load batch) per call.
  void on_snapshot_socket();
  void on_update_socket();
  void on_timer();

  bool following() const { return phase_ == Phase::kFollowing; }
  // When the upstream last sent anything (a KVPUB, HUGZ or reply).
  Clock::time_point last_heard() const { return last_heard_; }
  const std::string& upstream() const { return leader_; }
  // A replica's resumes and full snapshots from its upstream so far (a
  // declined resume whose snapshot it loaded counts as a full snapshot).
  std::uint64_t resumes() const { return resumes_; }
  std::uint64_t full_syncs() const { return full_syncs_; }
  // KVPUBs held while a snapshot loads or a catch-up runs.
  std::size_t buffered() const { return buffered_.size(); }
  zmq::socket_t& snapshot_socket() { return dealer_; }
  zmq::socket_t& update_socket() { return sub_; }

 private:
  static constexpr auto kSnapshotRetry = std::chrono::seconds(2);
  static constexpr std::size_t kLoadBatch = 1000;
  // Messages one call handles: a turn loads at most one batch of the snapshot
  // (or applies that many KVPUBs), so the reactor stays responsive while a big
  // map loads; the socket stays readable and the next turn goes on.
  static constexpr std::size_t kPerTurn = kLoadBatch;
  static constexpr std::size_t kMaxBuffered = 1'000'000;

  enum class Phase { kRequested, kLoading, kCatchingUp, kFollowing };
  void request_snapshot();
  bool gapped() const { return replica_ && !replica_->subtree.empty(); }
  std::string subtree() const { return replica_ ? replica_->subtree : std::string(); }
  void connect_updates();
  void next_upstream(const std::string& why);
  void replica_timer();
  void hold_resumed(protocol::chp::KvMsg& kv);
  bool begin_loading();
  void load_record(protocol::chp::KvMsg& kv);
  void load_held_as_snapshot(const std::string& why);
  void notify(std::span<const storage::ChpWrite> applied) const;
  void request_catchup(const std::string& why);
  void on_catchup_reply(protocol::chp::SnapshotReply& reply);
  void finish_catchup(const protocol::chp::Kthxbai& done);
  void apply_buffered();
  bool apply_batch(std::vector<storage::ChpWrite>& batch);
  zmq::socket_t new_dealer();
  void restart(const std::string& why);
  void flush_loaded();
  void finish_sync(const protocol::chp::Kthxbai& done);
  bool buffer(protocol::chp::KvMsg& kv);
  storage::ChpWrite write_of(protocol::chp::KvMsg& kv) const;
  static storage::ChpWrite outcome_of(const protocol::chp::KvMsg& kv);
  bool remember_covered(std::vector<storage::ChpWrite>& covered);
  std::uint64_t expiry_of(const std::string& properties) const;

  zmq::context_t& ctx_;
  storage::ChpStore& store_;
  PendingList& pending_;
  std::string leader_;
  std::string pair_token_;
  protocol::chp::Limits limits_;
  std::function<std::uint64_t()> now_ms_;
  security::SocketSecurity security_;  // CURVE client of the peer

  zmq::socket_t dealer_;
  zmq::socket_t sub_;
  Phase phase_ = Phase::kRequested;
  Clock::time_point last_progress_{};
  std::vector<storage::ChpRecord> loaded_;      // snapshot records not yet written
  std::vector<storage::ChpWrite> caught_;       // catch-up updates not yet applied
  std::vector<protocol::chp::KvMsg> buffered_;  // KVPUBs received while syncing
  std::uint64_t buffered_bytes_ = 0;
  std::uint64_t receive_budget_;
  std::optional<Replica> replica_;
  std::function<void(std::span<const storage::ChpWrite>)> applied_;
  std::size_t upstream_ = 0;  // replica_->upstreams index
  // A replica's resume reply, held until it is known to be one (its KTHXBAI
  // says resumed=1) or the snapshot sent instead (loaded as one).
  std::vector<protocol::chp::KvMsg> held_;
  std::uint64_t held_bytes_ = 0;
  Clock::time_point last_heard_ = Clock::now();
  std::uint64_t resumes_ = 0;
  std::uint64_t full_syncs_ = 0;
};

}  // namespace zstore::server
