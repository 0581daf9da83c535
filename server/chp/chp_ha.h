// ChpHa: the CHP reactor's high-availability part (Binary Star,
// docs/operations.md "High availability"). It owns the HA link to the peer,
// the Binary Star state, the follower a passive keeps its map with, the
// reconciler an active takes over what only the peer has with, the updates
// a passive holds pending, and the applied writes held until the passive
// acknowledged them. It adds its sockets to the reactor's poller and acts
// on the reactor's map through ChpHaHost. Not thread-safe: the reactor's
// thread (its state is published to other threads in an atomic).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <zmq.hpp>

#include "protocol/chp_codec.h"
#include "security/curve_socket.h"
#include "server/chp/chp_metrics.h"
#include "server/chp/chp_write_acks.h"
#include "server/chp/chp_write_requests.h"
#include "server/ha/binary_star.h"
#include "server/ha/chp_follower.h"
#include "server/ha/chp_pending.h"
#include "server/ha/chp_reconciler.h"
#include "server/ha/ha_link.h"
#include "server/reactor/log.h"
#include "server/reactor/poller.h"
#include "storage/chp/chp_store.h"

namespace zstore::server {

// A primary/backup pair (Binary Star). Absent: a standalone server.
struct HaConfig {
  HaState role = HaState::kPrimary;           // kPrimary or kBackup
  std::string bind;                           // our state PUB, e.g. tcp://127.0.0.1:5003
  std::string peer;                           // the peer's state PUB
  std::string peer_chp;                       // the peer's CHP base, tcp://host:P
  std::chrono::milliseconds heartbeat{1000};  // the peer is dead after 2 of them
  std::string cut_file;                       // test seam: the HA link is cut while this file exists
};

// The order in which the CHP reactor's parts handle their ready sockets
// within a turn (ChpServer::turn() says why).
enum ChpRank : int { kPeerState, kCollector, kSnapshotPort, kFollower, kSubscriptions, kUpstreamWrites, kReconciler };

// What the HA part asks of the reactor it belongs to.
class ChpHaHost {
 public:
  virtual ~ChpHaHost() = default;
  // Persists writes and, only if that succeeded, publishes them; false
  // when nothing was persisted.
  virtual bool commit_and_publish(std::span<storage::ChpWrite> writes) = 0;
  // Deletes what is due, from this turn on (after a takeover or hand-over).
  virtual void sweep_expiries_now() = 0;
  // Sends HUGZ at once: clients looking for the active find us.
  virtual void hugz_now() = 0;
  // Ends every snapshot being served: a passive serves nobody.
  virtual void drop_snapshots() = 0;
  // Sends a WRITTEN to the client that asked.
  virtual void send_written(const ChpWriteRequests::Reply& reply) = 0;
  // A write stored from the active, whose retry is answered applied.
  virtual void remember_applied(const storage::ChpWrite& write) = 0;
};

// What the HA part shares with the reactor's configuration.
struct ChpHaSettings {
  protocol::chp::Limits limits;
  std::function<std::uint64_t()> now_ms;  // wall clock (ms since epoch)
  security::SocketSecurity security;      // the peer shares our certificate
  std::uint64_t receive_budget_bytes = 0;
  std::size_t max_batch = 4096;  // writes committed at once in a hand-over
};

class ChpHa {
 public:
  using Clock = std::chrono::steady_clock;

  // Connects the HA link (throws zmq::error_t when it cannot bind) and
  // adds its socket to poller. Its Binary Star state is stored in *state
  // whenever it changes. store, metrics, poller, host and state outlive this.
  ChpHa(zmq::context_t& ctx, storage::ChpStore& store, HaConfig config, ChpHaSettings settings, ChpMetrics& metrics,
        Poller& poller, ChpHaHost& host, std::atomic<HaState>& state);
  ~ChpHa();
  ChpHa(const ChpHa&) = delete;
  ChpHa& operator=(const ChpHa&) = delete;

  bool active() const { return bstar_.active(); }
  // A client's snapshot request is a vote (Binary Star): whether it is
  // served here; may make us active.
  bool accept_vote();

  // The turn's work after the ready sockets were handled: the follower's
  // timers, the passive's PEERACK, the held writes' release, the hand-over.
  void after_dispatch();
  // The turn's last step: our state to the peer, when its beat is due.
  void send_state();
  // Whether the next turn has work at once (a hand-over's next step), and
  // the earliest of our timers.
  bool work_ready() const { return reconciler_ && reconciler_->received(); }
  Clock::time_point next_deadline(Clock::time_point bound) const;

  // A passive's client updates, applied at takeover unless the active
  // republishes them.
  void hold_pending(std::span<storage::ChpWrite> writes);
  // Client writes applied while a hand-over runs: ours win over the peer's.
  void note_client_writes(std::span<const storage::ChpWrite> writes);
  // An applied write's reply, held (true) until the passive of a joined
  // pair acknowledged its sequence; false: answer it now.
  bool hold_reply(ChpWriteRequests::Reply& reply);
  // The passive's PEERACK: it stored everything up to sequence.
  void take_peer_ack(std::uint64_t sequence);

  // Without CURVE, whether a request came from the peer: on a connection
  // named with the pair token it told us, from an address of its host
  // (routing_id: the request's first frame; address: its Peer-Address).
  // *why says why not.
  bool from_peer(std::string_view routing_id, const std::string& address, std::string* why);

 private:
  void handle_peer_state();
  void on_peer(const HaPeerState& peer);
  void enter(HaState from, HaState to);
  bool become_active();
  MapFacts own_map() const { return {store_.synced(), store_.last_sequence()}; }
  bool peer_knows_us() const;
  bool handed_over() const;
  void start_following();
  void stop_following();
  void maybe_reconcile();
  void start_reconcile(std::unique_ptr<ChpReconciler> reconciler);
  std::unique_ptr<ChpReconciler> end_reconcile();
  void on_reconciler_socket();
  void step_reconcile();
  void drop_reconcile(const std::string& why);  // logs; retried after kReconcileRetry
  void acknowledge_active();
  void release_acked_writes();
  void resolve_peer_addresses();

  zmq::context_t& ctx_;
  storage::ChpStore& store_;
  HaConfig config_;
  ChpHaSettings settings_;
  ChpMetrics& metrics_;
  Poller& poller_;
  ChpHaHost& host_;

  HaLink link_;
  BinaryStar bstar_;
  std::atomic<HaState>& published_state_;
  std::string pair_token_;                   // ours, sent in our HA state (ha_link.h)
  std::vector<std::string> peer_addresses_;  // numeric, as ZeroMQ's Peer-Address gives them
  Clock::time_point peer_addresses_at_{};
  std::optional<HaPeerState> peer_;  // the peer's latest state message
  std::uint64_t max_peer_last_ = 0;  // the highest last sequence the peer ever told
  Clock::time_point next_beat_{};

  std::unique_ptr<ChpFollower> follower_;  // a passive's, once handed over
  std::uint64_t ack_sent_ = 0;             // its last PEERACK
  Clock::time_point next_ack_{};
  PendingList pending_;

  std::unique_ptr<ChpReconciler> reconciler_;  // an active's hand-over from the peer
  std::uint64_t reconciled_ = 0;               // the peer's last sequence we took over
  Clock::time_point next_reconcile_{};
  ChpWriteAcks write_acks_;  // waits 2 heartbeats

  RateLimiter bad_input_log_;
  // A hand-over that fails is retried every second and may fail the same
  // way for as long as the cause lasts (the memory budget): once a minute.
  RateLimiter handover_failure_log_{1, std::chrono::minutes(1)};
  RateLimiter ack_timeout_log_;  // writes answered without the passive's acknowledgement
  RateLimiter peer_log_;
};

}  // namespace zstore::server
