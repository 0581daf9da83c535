// The CHP reactor's configuration (ChpServer, chp_server.h): its ports and
// limits, its timers, and what it is besides a standalone server (one of a
// pair, HaConfig in chp_ha.h; or a read replica).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "protocol/chp_codec.h"
#include "security/curve_socket.h"
#include "server/access/chp_acl.h"
#include "server/access/key_revocations.h"
#include "server/chp/chp_ha.h"
#include "server/chp/chp_snapshots.h"
#include "server/reactor/connection_watch.h"
#include "storage/db/status.h"
#include "server/reactor/io_batching.h"
#include "server/reactor/receive_budget.h"

namespace zstore::server {

// A read replica (--replica-of, docs/replicas.md): follows the first
// reachable upstream, serves its map with the upstream's sequences, and
// forwards KVSETs and WRITE? requests there.
struct ReplicaConfig {
  std::vector<std::string> upstreams;       // tcp://host:P, a pair's two members or one replica
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
  std::size_t max_batch = 4096;             // KVSETs drained per loop turn
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
  // Set: the collector's updates are written unsynced and published once
  // this fsync of the log (Database::sync_wal), run on a thread of its own,
  // made them durable, so the loop serves snapshots meanwhile and writes the
  // next batch during the fsync (at most two batches wait). Null: each
  // write is synced by the store's policy. A standalone server's (zstored
  // sets it under --sync always, not in a pair or on a replica).
  std::function<storage::Status()> sync_wal;
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

}  // namespace zstore::server
