// ChpMetrics: counters of the CHP reactor, written by its thread and read
// by anyone (metrics endpoint, tests).
#pragma once

#include <atomic>
#include <cstdint>

#include "server/reactor/loop_metrics.h"

namespace zstore::server {

struct ChpMetrics {
  std::atomic<std::uint64_t> updates_applied{0};
  std::atomic<std::uint64_t> expiries{0};
  std::atomic<std::uint64_t> snapshots_served{0};
  std::atomic<std::uint64_t> snapshot_keys_sent{0};
  std::atomic<std::uint64_t> snapshots_stalled{0};
  std::atomic<std::uint64_t> snapshots_refused{0};         // no slot: share, slots or byte budget taken
  std::atomic<std::uint64_t> snapshots_evicted{0};         // paused sessions that gave their slot to a waiting request
  std::atomic<std::uint64_t> snapshot_bytes_in_flight{0};  // the pump's estimate (chp_snapshots.h)
  std::atomic<std::uint64_t> batches{0};  // write batches committed (one per loop turn with updates)  // dropped after
                                          // --snapshot-stall-ms without progress
  std::atomic<std::uint64_t> write_failures{0};
  std::atomic<std::uint64_t> last_sequence{0};
  std::atomic<std::uint64_t> loop_errors{0};            // events the reactor logged and skipped
  std::atomic<std::uint64_t> loop_turns{0};             // reactor turns (an idle server makes a few per second)
  std::atomic<std::uint64_t> resumes{0};                // snapshot requests answered from the history
  std::atomic<std::uint64_t> resumes_declined{0};       // resume requests answered with a full snapshot
  std::atomic<std::uint64_t> handed_over{0};            // updates taken over from the HA peer
  std::atomic<std::uint64_t> handovers_incomplete{0};   // hand-overs without the peer's deletes
  std::atomic<std::uint64_t> snapshot_keys_expired{0};  // left out of snapshots: expired, not yet swept
  // WRITE? requests (protocol/chp_writes.h): answered applied (also
  // counted in updates_applied when new) and refused (precondition).
  std::atomic<std::uint64_t> writes_confirmed{0};
  std::atomic<std::uint64_t> writes_refused{0};
  // WRITTEN answers waiting because their client's queue (the snapshot
  // port's high-water mark) was full, and those dropped: past the waiting
  // bound (written_outbox.h), or their client had gone. A dropped answer's
  // client learns the outcome by a retry.
  std::atomic<std::uint64_t> written_waiting{0};
  std::atomic<std::uint64_t> written_unsent{0};
  // HISTORY? requests (protocol/chp_key_history.h) answered with the key's
  // versions, and those refused by --acl.
  std::atomic<std::uint64_t> history_requests{0};
  std::atomic<std::uint64_t> acl_denied_history{0};
  // A read replica (--replica-of, docs/replicas.md): ms since its upstream
  // last sent anything (-1: not a replica), the bound past which it says it
  // is stale, its resumes and full snapshots from upstream, and the KVSETs
  // and WRITE? requests it forwarded upstream.
  std::atomic<std::int64_t> replica_upstream_silent_ms{-1};
  std::atomic<std::int64_t> replica_stale_after_ms{0};
  std::atomic<std::uint64_t> replica_resumes{0};
  std::atomic<std::uint64_t> replica_full_syncs{0};
  std::atomic<std::uint64_t> replica_forwarded{0};
  MalformedCounts malformed;
  // --acl denials by kind: KVSETs dropped, snapshot keys withheld,
  // subscriptions narrowed or refused, HA peer requests from non-peers.
  std::atomic<std::uint64_t> acl_denied_writes{0};
  std::atomic<std::uint64_t> acl_withheld_snapshot_keys{0};
  std::atomic<std::uint64_t> acl_denied_subscriptions{0};
  std::atomic<std::uint64_t> acl_denied_peer_requests{0};
  std::atomic<std::uint64_t> acl_resubscriptions{0};  // reloads that dropped every subscriber (new r prefixes)
  // The HA pair's requests (PEERSNAPSHOT?, CATCHUP?, RECONCILE?) refused:
  // not from the configured peer (with or without --acl).
  std::atomic<std::uint64_t> peer_requests_refused{0};
  // Liveness: steady-clock ms (loop_clock_ms()) of the reactor's latest
  // turn; set by start(), 0 after the last turn.
  std::atomic<std::int64_t> loop_heartbeat_ms{0};
  // Ports unbound to end their connections and not bound again yet
  // (bound_endpoint.h): nobody can connect to them meanwhile.
  std::atomic<std::int64_t> ports_unbound{0};
};

}  // namespace zstore::server
