// ChpServer: the CHP reactor (rfc 12). ROUTER at P answers ICANHAZ? with a
// streamed snapshot, SUB at P+2 collects KVSETs, PUB at P+1 publishes
// KVPUBs and HUGZ. Every update is persisted (one group commit per loop
// turn) before its KVPUB is sent, so whatever a client saw is on disk.
// TTLs are absolute expiry times in the store and are swept from its index.
// start() binds and runs the reactor on its own thread; stop() joins it.
// Its parts share one Poller, each with its own sockets and handlers: this
// class (the three ports, the ACL, a replica's upstream), and in a pair the
// HA part (ChpHa, chp_ha.h), which owns the link to the peer, the Binary
// Star state, the follower, the hand-over and the held write answers.
#pragma once

#include <array>
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
#include "server/chp/chp_ha.h"
#include "server/chp/chp_server_config.h"
#include "server/reactor/bound_endpoint.h"
#include "server/access/chp_acl.h"
#include "server/ha/chp_follower.h"
#include "server/chp/chp_metrics.h"
#include "server/ha/chp_pending.h"
#include "server/jobs/wal_sync_queue.h"
#include "server/reactor/receive_budget.h"
#include "server/reactor/io_batching.h"
#include "server/access/key_revocations.h"
#include "server/chp/chp_snapshots.h"
#include "server/chp/chp_write_requests.h"
#include "server/chp/written_outbox.h"
#include "server/reactor/connection_watch.h"
#include "server/reactor/log.h"
#include "server/reactor/poller.h"
#include "server/reactor/reactor_thread.h"
#include "server/reactor/zmq_frames.h"
#include "storage/chp/chp_store.h"
#include "storage/db/database.h"

namespace zstore::server {

class ChpServer : private ChpHaHost {
 public:
  ChpServer(zmq::context_t& ctx, storage::ChpStore& store, ChpServerConfig config, ChpMetrics& metrics);
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
  int poll_timeout_ms() const;
  void drain_collector();
  void serve_snapshot_requests();
  void pump_snapshots();
  void expire_due();
  void trim_history_by_age();
  void heartbeat();
  bool serving() const { return !ha_ || ha_->active(); }
  // A snapshot request (a client's vote): whether it is answered.
  bool accept_vote();
  std::unique_ptr<storage::ChpSnapshotCursor> resume_cursor(std::uint64_t after, std::string_view subtree);
  // epochs, history-from, and resumed=1 for a resume (docs/chp-extensions.md).
  std::string kthxbai_properties(bool resumed = false) const;
  void report_malformed(const char* where, const protocol::DecodeError& error);

  // ChpHaHost, for the HA part (chp_ha.h).
  bool commit_and_publish(std::span<storage::ChpWrite> writes) override;
  // Sweeps at once and on every turn until nothing due is left (after a
  // takeover or a hand-over), one bounded batch a turn.
  void sweep_expiries_now() override;
  void hugz_now() override { last_hugz_ = Clock::time_point{}; }
  void drop_snapshots() override { snapshots_.clear(); }
  void send_written(const ChpWriteRequests::Reply& reply) override;
  void remember_applied(const storage::ChpWrite& write) override {
    write_requests_.remember_applied(write.uuid, write.sequence);
  }

  // Updates (chp_server.cc). Reads a received KVSET into *w (reusing its
  // strings' buffers), as received at now (ms, the turn's clock); false
  // (counted, logged) when it is malformed or the ACL refuses it.
  bool take_kvset(const ReceivedMessage& msg, std::uint64_t now, storage::ChpWrite* w);
  // Persists writes and, only if that succeeded, publishes them. received[i],
  // when given, is the KVSET writes[i] came from: its parts are published as
  // the KVPUB (zero-copy, a new sequence frame), so they are moved from.
  // False when nothing was persisted (counted, logged).
  bool commit_and_publish(std::span<storage::ChpWrite> writes, std::span<ReceivedMessage> received);
  // Whether writes were persisted (counted and logged when not).
  bool persisted(const storage::Status& s, std::size_t writes);
  void announce(std::span<storage::ChpWrite> writes, std::span<ReceivedMessage> received);
  // Under a WAL sync queue (chp_server_sync.cc): the collector's batch, or
  // a turn's WRITE? group, written unsynced and left to wait for its fsync;
  // publishing those whose fsync ended (in order; a failed fsync's are
  // refused) and then sending their WRITTENs; and waiting for every waiting
  // batch, before anything that must see only what clients may see (a
  // snapshot, a key's history) or publishes by itself.
  struct CollectorBatch;  // below
  void start_sync_queue();
  CollectorBatch& batch_to_fill();
  void commit_unsynced(CollectorBatch& batch);
  void commit_requests_unsynced();
  void answer_after_waiting(std::vector<ChpWriteRequests::Reply> replies);
  void answer_synced(CollectorBatch& batch, bool synced);
  void publish_synced();
  void publish_unsynced_now();
  void clear(CollectorBatch& batch);
  void publish(const storage::ChpWrite& w);
  void publish_received(ReceivedMessage& msg, std::uint64_t sequence);
  void count_published(std::size_t bytes);

  // Confirmed and conditional writes (protocol/chp_writes.h,
  // chp_server_writes.cc), taken from the snapshot socket and committed
  // once a turn (chp_write_requests.h). An applied one's WRITTEN waits for
  // the passive of a joined pair (ChpHa::hold_reply).
  void take_write(const std::string& identity, const ReceivedMessage& msg);
  void commit_write_requests();
  std::size_t decide_write_requests(std::vector<storage::ChpWrite>* writes,
                                    std::vector<ChpWriteRequests::Reply>* replies);
  void answer_write(ChpWriteRequests::Reply reply);
  void flush_written();
  void count_written(std::size_t dropped);
  // A key's history (protocol/chp_key_history.h, chp_server_history.cc):
  // answered at once, under the same read right as a snapshot of the key.
  void serve_history(const std::string& identity, const ReceivedMessage& msg);

  // The pair's requests (chp_server_peer.cc): PEERSNAPSHOT?, CATCHUP?,
  // RECONCILE? and PEERACK come only from the HA peer: with CURVE its key
  // (ours, kPeerName); without, a connection named with the pair token the
  // peer sent over the HA link, from an address of the configured peer
  // host. Others are refused, counted and logged (rate-limited), and get
  // nothing, so no priority either.
  bool may_ask_as_peer(const ReceivedMessage& msg, std::string_view command);
  void serve_reconcile(const std::string& identity, const ReceivedMessage& msg);
  void serve_catchup(const std::string& identity, const ReceivedMessage& msg);
  void serve_icanhaz(const std::string& identity, const ReceivedMessage& msg, bool peer);
  void take_peer_ack(const ReceivedMessage& msg);

  // Access rules (chp_server_acl.cc; all pass without an ACL).
  bool may_write(const ReceivedMessage& msg, std::string_view key);
  bool may_read(const ReceivedMessage& msg, std::string_view key);
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
  Poller poller_;  // every part's sockets: ours, the HA part's, the replica's

  SnapshotPump snapshots_;
  IoBatching::Vote io_vote_;              // while snapshots stream
  IoBatching::BacklogVote backlog_vote_;  // on the collector
  RateLimiter bad_input_log_;
  RateLimiter write_error_log_;
  RateLimiter loop_error_log_;
  RateLimiter acl_log_;
  RateLimiter peer_request_log_;
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
  // The collector's batches, kept across turns so a turn allocates nothing
  // once they have grown: inbox[i] is the message writes[i] came from.
  // Without a sync queue only the first is used; with one, a batch written
  // unsynced waits (ticket set) until its fsync ends, while the loop fills
  // the other, and a turn's WRITE? group is such a batch too: its replies
  // (and those of later groups that wrote nothing) go once it is published.
  struct CollectorBatch {
    std::vector<ReceivedMessage> inbox;
    std::vector<storage::ChpWrite> writes;
    std::size_t n = 0;         // writes taken
    std::size_t received = 0;  // of those, the first `received` came from inbox (a WRITE? group's: none)
    std::uint64_t ticket = 0;  // its WalSyncQueue ticket while it waits; else 0
    std::vector<ChpWriteRequests::Reply> replies;  // WRITTENs sent once it is published
  };
  std::array<CollectorBatch, 2> batches_;
  std::size_t next_batch_ = 0;  // the one the collector fills next
  std::unique_ptr<WalSyncQueue> wal_sync_;

  Clock::time_point next_expiry_{};
  bool expiry_backlog_ = false;
  Clock::time_point next_history_trim_{};
  ChpWriteRequests write_requests_;
  std::vector<storage::ChpWrite> group_writes_;  // a WRITE? group's, without a sync queue: slots kept
  WrittenOutbox written_outbox_;                 // WRITTENs waiting for their writer's pipe

  std::unique_ptr<ChpHa> ha_;                         // in a pair
  std::atomic<HaState> ha_state_{HaState::kPrimary};  // ha_'s, for other threads

  // A replica's follower of its upstream (its pending list only remembers
  // the UUIDs it saw), and its forwarding there: KVSETs on a PUB to its
  // collector, WRITE? on a DEALER whose replies (WRITTEN, by UUID) go back
  // to the asking client; forwarded_to_ is the upstream they connect to.
  std::unique_ptr<ChpFollower> follower_;
  PendingList replica_seen_;
  zmq::socket_t upstream_writer_;
  zmq::socket_t upstream_writes_;
  std::string forwarded_to_;
  std::map<std::string, std::string> write_askers_;  // uuid -> client identity, bounded
};

}  // namespace zstore::server
