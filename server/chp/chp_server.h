// ChpServer: the CHP reactor (rfc 12). ROUTER at P answers ICANHAZ? with a
// streamed snapshot, SUB at P+2 collects KVSETs, PUB at P+1 publishes
// KVPUBs and HUGZ. Every update is persisted (one group commit per loop
// turn) before its KVPUB is sent, so whatever a client saw is on disk.
// TTLs are absolute expiry times in the store and are swept from its index.
// start() binds and runs the reactor on its own thread; stop() joins it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "protocol/chp_codec.h"
#include "security/curve_socket.h"
#include "server/ha/binary_star.h"
#include "server/reactor/bound_endpoint.h"
#include "server/access/chp_acl.h"
#include "server/ha/chp_follower.h"
#include "server/chp/chp_metrics.h"
#include "server/ha/chp_pending.h"
#include "server/reactor/receive_budget.h"
#include "server/ha/chp_reconciler.h"
#include "server/ha/ha_link.h"
#include "server/reactor/io_batching.h"
#include "server/access/key_revocations.h"
#include "server/chp/chp_snapshots.h"
#include "server/chp/chp_write_acks.h"
#include "server/chp/chp_write_requests.h"
#include "server/reactor/connection_watch.h"
#include "server/reactor/log.h"
#include "server/reactor/reactor_thread.h"
#include "server/reactor/zmq_frames.h"
#include "storage/chp/chp_store.h"
#include "storage/db/database.h"

namespace zstore::server {

// A primary/backup pair (Binary Star). Absent: a standalone server.
struct HaConfig {
  HaState role = HaState::kPrimary;  // kPrimary or kBackup
  std::string bind;                  // our state PUB, e.g. tcp://127.0.0.1:5003
  std::string peer;                  // the peer's state PUB
  std::string peer_chp;              // the peer's CHP base, tcp://host:P
  std::chrono::milliseconds heartbeat{1000};  // the peer is dead after 2 of them
  std::string cut_file;  // test seam: the HA link is cut while this file exists
};

// A read replica (--replica-of, docs/replicas.md): follows the first
// reachable upstream, serves its map with the upstream's sequences, and
// forwards KVSETs and WRITE? requests there.
struct ReplicaConfig {
  std::vector<std::string> upstreams;  // tcp://host:P, a pair's two members or one replica
  std::chrono::milliseconds silence{3000};  // then the next upstream is tried
  // Past this without hearing the upstream, /healthz and KTHXBAI say the
  // map is stale (docs/replicas.md).
  std::chrono::milliseconds stale_after{10000};
  // --replica-subtree: the prefix it follows and serves (empty: the whole
  // map); a snapshot request for anything wider is not answered.
  std::string subtree;
  // The upstream link's sockets (follower, forwarders): plain, or CURVE
  // clients with the replica's certificate and the upstream's key.
  security::SocketSecurity upstream_security;
};

struct ChpServerConfig {
  std::string bind = "127.0.0.1";
  std::uint16_t port = 5556;
  protocol::chp::Limits limits;
  std::chrono::milliseconds hugz_interval{1000};
  std::chrono::milliseconds expiry_interval{100};
  // --chp-history-ms: history entries older than this are dropped (checked
  // about once a second, by active and passive alike); 0 = no age bound.
  std::chrono::milliseconds history_max_age{0};
  std::size_t max_batch = 4096;          // KVSETs drained per loop turn
  std::size_t max_batch_bytes = 64u << 20;  // and their bytes: a turn stops after the message that reaches it
  // --receive-buffer-bytes (receive_budget.h): bytes one connection's
  // receive queue may hold (collector, HA follower), and the HA pending list.
  std::uint64_t receive_budget_bytes = kDefaultReceiveBudgetBytes;
  // KVSYNCs sent per loop turn: small enough that KVSETs arriving during a
  // large snapshot wait little for the reactor (docs/benchmarks.md).
  std::size_t snapshot_slice = 256;
  // A snapshot whose client read nothing this long is dropped (its RocksDB
  // snapshot released); 0 = never.
  std::chrono::milliseconds snapshot_stall{30000};
  // Slots per client group, the pause that loses a slot to a waiting
  // request, the byte budget of the sessions' pipes (chp_snapshots.h); its
  // pipe_messages is the snapshot port's ZMQ_SNDHWM.
  SnapshotFairness snapshot_fairness;
  std::function<std::uint64_t()> now_ms;  // wall clock (ms since epoch); injectable
  std::optional<HaConfig> ha;
  std::optional<ReplicaConfig> replica;  // exclusive with ha
  // CURVE for every socket (bound ones as servers, the HA side's connections
  // as clients of the peer, which shares our certificate); default plain.
  security::SocketSecurity security;
  // --acl (chp_acl.h): who may read and write which keys, re-read on
  // SIGHUP; null: everyone admitted may do everything. Needs CURVE (clients
  // are named by key).
  std::shared_ptr<ChpAclFile> acl;
  // The allow list's revocations (zap_handler.h): each ends every
  // connection to the three ports. Null: no CURVE. Outlives the server.
  const KeyRevocations* revocations = nullptr;
  // The context's I/O threads batch while snapshots stream (io_batching.h);
  // null: never. Outlives the server.
  IoBatching* io_batching = nullptr;
  // Caps the three ports' connections and drops publisher connections more
  // than subscriber_buffer_bytes behind (connection_watch.h); null: no caps.
  // Outlives the server, stopped after it.
  ConnectionWatch* connections = nullptr;
  std::uint64_t subscriber_buffer_bytes = 0;
};

class ChpServer {
 public:
  ChpServer(zmq::context_t& ctx, storage::ChpStore& store, ChpServerConfig config,
            ChpMetrics& metrics);
  ~ChpServer();
  ChpServer(const ChpServer&) = delete;
  ChpServer& operator=(const ChpServer&) = delete;

  // Binds the three sockets (throws zmq::error_t naming nothing on failure:
  // caller reports) and starts the reactor thread.
  void start();
  // Finishes the current turn, then stops. Idempotent.
  void stop();

  std::vector<std::string> endpoints() const;

  // The Binary Star state, or "standalone".
  std::string_view ha_state() const;

 private:
  using Clock = std::chrono::steady_clock;
  void run();
  bool turn();  // false: stop was asked
  void drain_collector();
  void serve_snapshot_requests();
  void pump_snapshots();
  void expire_due();
  // Sweeps at once and on every turn until nothing due is left (after a
  // takeover or a hand-over), one bounded batch a turn.
  void sweep_expiries_now();
  void trim_history_by_age();
  void heartbeat();
  // High availability (no-ops when standalone).
  bool serving() const { return !bstar_ || bstar_->active(); }
  bool accept_vote();
  std::unique_ptr<storage::ChpSnapshotCursor> resume_cursor(std::uint64_t after, std::string_view subtree);
  void handle_peer_state();
  void on_peer(const HaPeerState& peer);
  void enter(HaState from, HaState to);
  bool become_active();
  void send_ha_state();
  MapFacts own_map() const { return {store_.synced(), store_.last_sequence()}; }
  // The hand-over (chp_reconciler.h), each turn: the active takes what only
  // the peer has; a passive starts following only once nothing of its own
  // would be lost.
  void ha_tick();
  bool handed_over() const;
  void maybe_reconcile();
  // Applies the next part of what the peer's side of a hand-over gives us
  // (ChpReconciler::step), once per turn until it is all in.
  void step_reconcile();
  void drop_reconcile(const std::string& why);  // logs; retried after kReconcileRetry
  void serve_reconcile(const std::string& identity, const ReceivedMessage& msg);
  // epochs, history-from, and resumed=1 for a resume (docs/chp-extensions.md).
  std::string kthxbai_properties(bool resumed = false) const;
  // Reads a received KVSET into *w (reusing its strings' buffers), as
  // received at now (ms, the turn's clock); false (counted, logged) when
  // it is malformed or the ACL refuses it.
  bool take_kvset(const ReceivedMessage& msg, std::uint64_t now, storage::ChpWrite* w);
  // Confirmed and conditional writes (protocol/chp_writes.h), taken from
  // the snapshot socket and committed once a turn (chp_write_requests.h).
  void take_write(const std::string& identity, const ReceivedMessage& msg);
  void commit_write_requests();
  // Sends a WRITTEN, or holds an applied one until the passive of a joined
  // pair acknowledged its sequence (chp_write_acks.h; chp_server_ha.cc).
  void answer_write(ChpWriteRequests::Reply reply);
  void release_acked_writes();
  void take_peer_ack(const ReceivedMessage& msg);
  // A following passive's PEERACK of what it stored: after each batch, and
  // every heartbeat.
  void acknowledge_active();
  // A key's history (protocol/chp_key_history.h, chp_server_history.cc):
  // answered at once, under the same read right as a snapshot of the key.
  void serve_history(const std::string& identity, const ReceivedMessage& msg);
  // Persists writes and, only if that succeeded, publishes them. received[i],
  // when given, is the KVSET writes[i] came from: its parts are published as
  // the KVPUB (zero-copy, a new sequence frame), so they are moved from.
  // False when nothing was persisted (counted, logged).
  bool commit_and_publish(std::span<storage::ChpWrite> writes, std::span<ReceivedMessage> received = {});
  void publish(const storage::ChpWrite& w);
  void publish_received(ReceivedMessage& msg, std::uint64_t sequence);
  void count_published(std::size_t bytes);
  void report_malformed(const char* where, const protocol::DecodeError& error);
  // Access rules (chp_server_acl.cc; all pass without an ACL).
  bool may_write(const ReceivedMessage& msg, std::string_view key);
  bool may_read(const ReceivedMessage& msg, std::string_view key);
  // The pair's requests (PEERSNAPSHOT?, CATCHUP?, RECONCILE?) come only from
  // the HA peer: with CURVE its key (ours, kPeerName); without, a connection
  // named with the pair token the peer sent over the HA link, from an
  // address of the configured peer host. Others are refused, counted and
  // logged (rate-limited), and get nothing, so no priority either.
  bool may_ask_as_peer(const ReceivedMessage& msg, std::string_view command);
  // Without CURVE: whether the peer's state says it knows our pair token
  // (before we ask it anything, so that it does not refuse us). With: true.
  bool peer_knows_us() const;
  // The addresses of the configured peer's hosts (--ha-peer-chp, --ha-peer).
  void resolve_peer_addresses();
  SnapshotPump::KeyFilter read_filter(const ReceivedMessage& msg) const;
  // Who asked, for the snapshot slots' fairness: a CURVE client's name, else
  // the connection's address.
  std::string snapshot_group(const ReceivedMessage& msg) const;
  void serve_subscriptions();  // XPUB_MANUAL: subscriptions become the permitted topics
  // A removed CURVE key ends every connection (each client authenticates
  // again); new r prefixes end every subscriber's (each subscribes again).
  void follow_reloads();
  void follow_acl_reloads();
  bool endpoint_unbound() const;
  int poll_timeout_ms() const;
  void serve_catchup(const std::string& identity, const ReceivedMessage& msg);
  // Read replica (chp_server_replica.cc; no-ops otherwise).
  void start_replica();
  void replica_tick();
  void republish(std::span<const storage::ChpWrite> applied);
  void forward_kvsets();
  void forward_write(const std::string& identity, const ReceivedMessage& msg);
  void relay_written();
  void connect_forwarders();
  bool replica_stale() const;
  // Whether this server holds the whole of `subtree` (logs and counts a
  // refusal when it does not: a subtree replica asked for a wider one).
  bool holds_subtree(std::string_view subtree);
  // A complete map taken from upstream (sequence 0: none taken yet).
  bool replica_has_map() const { return store_.synced() && store_.last_sequence() != 0; }

  zmq::context_t& ctx_;
  storage::ChpStore& store_;
  ChpServerConfig config_;
  ChpMetrics& metrics_;

  zmq::socket_t router_;
  zmq::socket_t publisher_;
  zmq::socket_t collector_;
  ReactorThread reactor_{metrics_.loop_heartbeat_ms, &metrics_.loop_turns};

  SnapshotPump snapshots_;
  IoBatching::Vote io_vote_;  // while snapshots stream
  IoBatching::BacklogVote backlog_vote_;  // on the collector
  RateLimiter bad_input_log_;
  RateLimiter write_error_log_;
  // A hand-over that fails is retried every second and may fail the same
  // way for as long as the cause lasts (the memory budget): once a minute.
  RateLimiter handover_failure_log_{1, std::chrono::minutes(1)};
  RateLimiter loop_error_log_;
  RateLimiter ack_timeout_log_;  // writes answered without the passive's acknowledgement
  RateLimiter acl_log_;
  RateLimiter peer_request_log_;
  std::string pair_token_;                  // ours, sent in our HA state (ha_link.h)
  std::vector<std::string> peer_addresses_;  // numeric, as ZeroMQ's Peer-Address gives them
  Clock::time_point peer_addresses_at_{};
  // --acl: the rules the publisher's subscriptions were set under, from
  // reload generation acl_generation_ (chp_server_acl.cc).
  std::shared_ptr<const ChpAcl> subscribed_under_;
  std::uint64_t acl_generation_ = 0;
  BoundEndpoint router_ep_;
  BoundEndpoint publisher_ep_;
  BoundEndpoint collector_ep_;
  WatchedPort* published_ = nullptr;  // the publisher's bytes, for the watch's byte budget
  KeyRevocations::Watch revocations_;
  std::uint64_t refused_since_ok_ = 0;  // updates refused since the last successful write
  Clock::time_point last_hugz_{};
  // The collector's batch, kept across turns so a turn allocates nothing
  // once they have grown: inbox_[i] is the message writes_[i] came from.
  std::vector<ReceivedMessage> inbox_;
  std::vector<storage::ChpWrite> writes_;

  Clock::time_point next_expiry_{};
  bool expiry_backlog_ = false;
  Clock::time_point next_history_trim_{};

  std::unique_ptr<HaLink> ha_link_;
  std::unique_ptr<BinaryStar> bstar_;
  std::unique_ptr<ChpFollower> follower_;
  // A replica's forwarding to its upstream: KVSETs on a PUB to its
  // collector, WRITE? on a DEALER whose replies (WRITTEN, by UUID) go back
  // to the asking client; forwarded_to_ is the upstream they connect to.
  zmq::socket_t upstream_writer_;
  zmq::socket_t upstream_writes_;
  std::string forwarded_to_;
  std::map<std::string, std::string> write_askers_;  // uuid -> client identity, bounded
  std::unique_ptr<ChpReconciler> reconciler_;
  std::optional<HaPeerState> peer_;    // the peer's latest state message
  std::uint64_t max_peer_last_ = 0;    // the highest last sequence the peer ever told
  std::uint64_t reconciled_ = 0;       // the peer's last sequence we took over
  Clock::time_point next_reconcile_{};
  PendingList pending_;
  ChpWriteRequests write_requests_;
  ChpWriteAcks write_acks_{std::chrono::milliseconds(0)};  // a pair's: waits 2 heartbeats
  std::uint64_t ack_sent_ = 0;     // a passive's last PEERACK
  Clock::time_point next_ack_{};
  std::atomic<HaState> published_state_{HaState::kPrimary};
  Clock::time_point next_ha_beat_{};
};

}  // namespace zstore::server
