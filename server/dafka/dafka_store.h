// DafkaStore: zstored's Dafka store node (rfc 46 as in specs/DAFKA-WIRE.md).
// Its XPUB (verbose) is bound at tcp://bind:port and advertised through the
// towers (DafkaDiscovery); its SUB connects to every discovered publisher
// and subscribes to M and H (all), D+address, F (all), G (all), W+address.
// RECORDs and DIRECT-RECORDs drained in one loop turn are written in one
// batch (DafkaLog); only then are they ACKed (server/dafka/dafka_acks.h: one
// cumulative ACK per partition), and a HEAD at or below our head gets an
// ACK of our head (rate-limited per partition). Gaps seen from records or HEADs are
// FETCHed, retried on a timer (server/dafka/dafka_gaps.h). FETCHes from others are answered from disk,
// sliced across turns, an answer short of our head followed by a DIRECT-HEAD; GET-HEADS and CONSUMER-HELLO get
// DIRECT-HEADs; a subscription to L+address gets a STORE-HELLO. Malformed input (and a topic name that is not printable
// UTF-8) is counted and dropped; a new partition past config.partition_limits is refused, counted and logged once per
// interval. start() binds and runs the reactor on its own thread; stop() joins it. With a certificate in
// config.security (docs/dafka-curve.md) the XPUB is a CURVE server (ZAP domain "dafka-store"), discovery talks CURVE to
// the towers, and the SUB connects to a peer's publisher only when its beacon carried a key that config.peer_name knows
// (the --curve-allow list), using that key as the publisher's server key.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "protocol/cidr.h"
#include "protocol/dafka_codec.h"
#include "security/curve_socket.h"
#include "server/reactor/bound_endpoint.h"
#include "server/dafka/dafka_acks.h"
#include "server/dafka/dafka_discovery.h"
#include "server/dafka/dafka_fetches.h"
#include "server/dafka/dafka_gaps.h"
#include "server/dafka/dafka_limits.h"
#include "server/dafka/dafka_metrics.h"
#include "server/jobs/wal_sync_queue.h"
#include "server/reactor/connection_watch.h"
#include "server/reactor/io_batching.h"
#include "server/access/key_revocations.h"
#include "server/reactor/log.h"
#include "server/reactor/poller.h"
#include "server/reactor/reactor_thread.h"
#include "server/reactor/receive_budget.h"
#include "storage/dafka/dafka_log.h"
#include "storage/db/database.h"

namespace zstore::server {

struct DafkaStoreConfig {
  std::string bind = "127.0.0.1";
  std::uint16_t port = 5582;
  std::string advertise = "127.0.0.1";
  std::vector<std::string> towers;  // tcp://host:T
  std::chrono::milliseconds beacon_interval{1000};
  std::chrono::milliseconds beacon_timeout{4000};
  std::chrono::milliseconds fetch_retry{1000};  // an unanswered FETCH is sent again
  int max_fetch_retries = 10;                   // per gap, by the timer; then the gap is skipped
  std::size_t max_batch = 4096;                 // messages drained per loop turn
  std::size_t max_batch_bytes = 64u << 20;      // and their bytes: a turn stops after the message that reaches it
  std::size_t fetch_slice = 1024;               // DIRECT-RECORDs sent per loop turn
  std::uint32_t max_fetch_count = 1000000;      // larger FETCH counts are capped
  std::size_t max_fetch_sessions = 256;
  // What decode() accepts; with receive_budget_bytes it sets the SUB's
  // largest frame and receive high-water mark (receive_budget.h).
  protocol::dafka::Limits limits;
  std::uint64_t receive_budget_bytes = kDefaultReceiveBudgetBytes;
  PartitionLimitsConfig partition_limits;  // which new partitions are taken (dafka_limits.h)
  std::vector<protocol::Cidr> peers;       // where the SUB may connect (host in one); empty: anywhere
  security::SocketSecurity security;       // plain without a certificate; server_key: the towers' key
  // With CURVE: the allowed name of a peer's Z85 key, empty when it is not
  // allowed; unset allows every key. Called on the reactor thread.
  std::function<std::string(const std::string& key)> peer_name;
  // The allow list's revocations (zap_handler.h): each ends every
  // connection to the XPUB and leaves the publishers whose key peer_name no
  // longer knows. Null: no CURVE. Outlives the store.
  const KeyRevocations* revocations = nullptr;
  // The context's I/O threads batch while FETCHes are answered
  // (io_batching.h); null: never. Outlives the store.
  IoBatching* io_batching = nullptr;
  // Caps the XPUB's connections and drops subscribers more than
  // subscriber_buffer_bytes behind (connection_watch.h); null: no caps.
  // Outlives the store, stopped after it.
  ConnectionWatch* connections = nullptr;
  std::uint64_t subscriber_buffer_bytes = 0;
  // Set: records are written unsynced and ACKed once this fsync of the log
  // (Database::sync_wal), run on a thread of its own, made them durable;
  // the loop writes the next batch meanwhile (at most two wait). Null: each
  // write is synced by the log's policy (zstored sets it under --sync always).
  std::function<storage::Status()> sync_wal;
};

class DafkaStore {
 public:
  // address: our node address (storage/dafka/node_address.h). db and log must
  // outlive the store.
  DafkaStore(zmq::context_t& ctx, storage::DafkaLog& log, std::string address, DafkaStoreConfig config,
             DafkaMetrics& metrics);
  ~DafkaStore();
  DafkaStore(const DafkaStore&) = delete;
  DafkaStore& operator=(const DafkaStore&) = delete;

  // Binds the XPUB, connects to the towers and starts the reactor thread.
  // Throws zmq::error_t (bind failure) or std::invalid_argument (bad tower
  // endpoint). Does not wait for any tower.
  void start();
  // Finishes the current turn, syncs, then stops. Idempotent.
  void stop();

  std::string endpoint() const;
  const std::string& address() const { return address_; }

 private:
  using Clock = std::chrono::steady_clock;
  using Key = storage::DafkaPartitionKey;
  struct Turn;  // what one drain collected

  void run();
  int poll_timeout_ms() const;
  void drain_subscriber();
  void dispatch(protocol::dafka::Borrowed&& borrowed, Turn* turn);
  void take_record(const protocol::dafka::RecordView& r, Turn* turn);
  // Whether a record (or HEAD, turn null) of this partition may be taken:
  // a partition held, or a new one within config.partition_limits (then
  // counted in turn). A refusal is counted and logged once per interval.
  bool admit(std::string_view subject, std::string_view partition, Turn* turn);
  void commit(Turn* turn);
  // What a written batch announces: gaps seen, ACKs (of the heads right
  // after its write), FETCHes for what is missing.
  struct Announcement {
    std::vector<std::pair<Key, std::uint64_t>> seen;  // partition, highest offset in the batch
    std::vector<protocol::dafka::Ack> acks;
    std::size_t records = 0;
    std::uint64_t ticket = 0;  // its WalSyncQueue ticket, while it waits
  };
  Announcement announcement(std::span<const PartitionTouched> touched, std::size_t records);
  void announce(const Announcement& a);
  // Under a WAL sync queue (dafka_store_sync.cc): announcing the batches
  // whose fsync ended, in order (a failed fsync's are refused, remembered
  // as gaps); and waiting for every waiting batch, before anything that
  // reads the log for others (heads, FETCH answers, HEAD ACKs).
  void announce_synced();
  void announce_unsynced_now();
  void refuse(const Turn& turn, const storage::Status& s);
  void count_outcomes(const std::vector<storage::DafkaAppend>& outcomes);
  void on_head(const protocol::dafka::Head& head);
  void on_fetch(protocol::dafka::Fetch&& fetch);
  void send_heads(const std::string& consumer, const std::string& subject);
  void on_subscriptions();
  void on_discovery();
  void on_timer();
  void apply(const std::vector<PeerChange>& changes);
  bool key_allowed(const std::string& key) const;  // by config.peer_name; every key without it
  bool peer_allowed(const PeerChange& change);     // --dafka-peers and CURVE keys; logs and counts a refusal
  void connect_sub(const std::string& endpoint, const std::string& key);  // throws zmq::error_t
  void connect_peer(const PeerChange& change);
  void disconnect_peer(const PeerChange& change);
  void follow_revocations();
  // The SUB's monitor, read every kMonitorInterval (or the idle poll's
  // second): a publisher whose connection ended is connected again
  // (dafka_store_peers.cc).
  static constexpr std::chrono::milliseconds kMonitorInterval{100};
  void on_sub_events();
  void reconnect_peer(const std::string& endpoint);
  void request_missing(const Key& key, bool from_timer);
  void give_up(const Key& key, GapTracker::Range missing);
  void pump_fetches();
  // Sends without blocking; a message that would block is dropped and counted
  // (every message but a DIRECT-RECORD is one the protocol sends again).
  bool send(const protocol::Frames& frames);
  template <typename FrameList>
  void count_published(const FrameList& frames);
  void report_malformed(const char* where, const protocol::DecodeError& error);
  void report_invalid(const char* what);

  zmq::context_t& ctx_;
  storage::DafkaLog& log_;
  std::string address_;
  DafkaStoreConfig config_;
  DafkaMetrics& metrics_;

  zmq::socket_t xpub_;
  zmq::socket_t sub_;
  zmq::socket_t sub_monitor_;  // PAIR: sub_'s ZMQ_EVENT_DISCONNECTED events
  Clock::time_point next_monitor_check_{};
  BoundEndpoint xpub_ep_;
  WatchedPort* published_ = nullptr;  // the XPUB's bytes, for the watch's byte budget
  KeyRevocations::Watch revocations_;
  ReactorThread reactor_{metrics_.loop_heartbeat_ms, &metrics_.loop_turns};
  Poller poller_;  // the store's sockets and the discovery's, in the order turn() handles them
  DafkaDiscovery discovery_;
  struct Connection {
    int refs = 0;     // peers announcing the endpoint
    std::string key;  // the server key it was connected with (CURVE)
  };
  std::map<std::string, Connection> connected_;  // by publisher endpoint
  GapTracker gaps_;
  FetchPump fetches_;
  SendPace fetch_pace_;                 // half the byte budget per check of the watch
  std::uint64_t trailers_counted_ = 0;  // fetches_.trailers_sent() already in metrics_.direct_heads_sent
  IoBatching::Vote io_vote_;            // while FETCHes are answered
  RateLimiter bad_input_log_;
  RateLimiter write_error_log_;
  RateLimiter peer_log_;
  PartitionLimits partition_limits_;
  RateLimiter limits_log_;              // one line per limits interval
  RateLimiter gap_log_;                 // gaps given up: one line per partition, so many partitions are many lines
  std::uint64_t refused_since_ok_ = 0;  // records refused since the last successful write
  std::unique_ptr<WalSyncQueue> wal_sync_;
  std::deque<Announcement> unsynced_;  // written, waiting for their fsync (at most 2)
  Clock::time_point next_retry_{};
  // HEADs at or below our head are answered with an ACK at most this often
  // per partition (on_head); the map holds the ones answered within it.
  static constexpr std::chrono::milliseconds kHeadAckInterval{250};
  std::map<Key, Clock::time_point, storage::DafkaPartitionOrder> head_acked_;
};

}  // namespace zstore::server
