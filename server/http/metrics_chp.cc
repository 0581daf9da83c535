#include "server/http/metrics_chp.h"

#include "server/http/metric_families.h"

namespace zstore::server {
namespace {

// Requests answered: updates, conditional writes, key histories, snapshots.
void chp_request_metrics(PromWriter& w, const ChpMetrics& m) {
  counter(w, "zstore_chp_updates_applied_total", "CHP updates (KVSET) persisted and published", get(m.updates_applied));
  counter(w, "zstore_chp_writes_confirmed_total", "CHP WRITE? requests answered applied", get(m.writes_confirmed));
  counter(w, "zstore_chp_writes_refused_total", "CHP WRITE? requests refused: their precondition did not hold",
          get(m.writes_refused));
  gauge(w, "zstore_chp_written_waiting",
        "CHP WRITTEN answers waiting for their client's queue on the snapshot port to take them",
        get(m.written_waiting));
  counter(w, "zstore_chp_written_unsent_total",
          "CHP WRITTEN answers dropped: too many waited for the client, or it had gone (a retry learns the outcome)",
          get(m.written_unsent));
  counter(w, "zstore_chp_history_requests_total", "CHP HISTORY? requests answered with a key's versions",
          get(m.history_requests));
  counter(w, "zstore_chp_snapshots_served_total", "CHP snapshots (ICANHAZ?) answered", get(m.snapshots_served));
  counter(w, "zstore_chp_snapshot_keys_sent_total", "KVSYNC messages sent in snapshots", get(m.snapshot_keys_sent));
  counter(w, "zstore_chp_batches_total", "CHP write batches committed (one per loop turn with updates)",
          get(m.batches));
  counter(w, "zstore_chp_snapshots_stalled_total",
          "CHP snapshots dropped: the client read nothing for --snapshot-stall-ms", get(m.snapshots_stalled));
  counter(w, "zstore_chp_snapshots_refused_total",
          "CHP snapshot requests refused: the client's share of the slots, every slot or the byte budget was taken",
          get(m.snapshots_refused));
  counter(w, "zstore_chp_snapshots_evicted_total",
          "CHP snapshots dropped, their client paused, for a request that needed the slot or the byte budget",
          get(m.snapshots_evicted));
  gauge(w, "zstore_chp_snapshot_bytes_in_flight",
        "estimated bytes waiting in the CHP snapshot sessions' pipes (at most their last ZMQ_SNDHWM messages)",
        get(m.snapshot_bytes_in_flight));
}

// The reactor's own work: expiries, refused writes, failed events, turns.
void chp_loop_metrics(PromWriter& w, const ChpMetrics& m) {
  counter(w, "zstore_chp_expiries_total", "CHP keys deleted because their ttl lapsed", get(m.expiries));
  counter(w, "zstore_chp_snapshot_keys_expired_total",
          "CHP keys left out of client snapshots because their ttl had lapsed before the sweep deleted them",
          get(m.snapshot_keys_expired));
  counter(w, "zstore_chp_write_failures_total", "CHP updates the database refused (not published)",
          get(m.write_failures));
  counter(w, "zstore_chp_loop_errors_total", "CHP reactor events that failed, were logged and skipped",
          get(m.loop_errors));
  counter(w, "zstore_chp_loop_turns_total", "CHP reactor turns (an idle server makes a few per second)",
          get(m.loop_turns));
}

// Resumes, a read replica's syncs with its upstream, HA hand-overs.
void chp_resume_metrics(PromWriter& w, const ChpMetrics& m) {
  counter(w, "zstore_chp_resumes_total", "CHP snapshot requests answered with the updates after the client's sequence",
          get(m.resumes));
  counter(w, "zstore_chp_resumes_declined_total",
          "CHP resume requests answered with a full snapshot (the history did not reach back, or was longer than "
          "the map)",
          get(m.resumes_declined));
  counter(w, "zstore_chp_replica_resumes_total", "read replica: resumes from its upstream after its last sequence",
          get(m.replica_resumes));
  counter(w, "zstore_chp_replica_full_syncs_total", "read replica: full snapshots requested from its upstream",
          get(m.replica_full_syncs));
  counter(w, "zstore_chp_replica_forwarded_total", "read replica: KVSETs and WRITE? requests forwarded upstream",
          get(m.replica_forwarded));
  counter(w, "zstore_chp_ha_handed_over_total", "CHP updates taken over from the HA peer before it resynced",
          get(m.handed_over));
  counter(w, "zstore_chp_ha_handovers_incomplete_total",
          "HA hand-overs whose peer history did not reach back (its deletes there were not taken over)",
          get(m.handovers_incomplete));
}

// What was dropped or refused: malformed messages, --acl, requests not from the peer.
void chp_access_metrics(PromWriter& w, const ChpMetrics& m) {
  malformed(w, "zstore_chp_malformed_total", "malformed CHP messages dropped, by kind", m);
  w.family("zstore_chp_acl_denied_total", "counter", "CHP requests --acl denied, by kind");
  w.sample(get(m.acl_denied_writes), {{"kind", "write"}});
  w.sample(get(m.acl_withheld_snapshot_keys), {{"kind", "snapshot_key"}});
  w.sample(get(m.acl_denied_subscriptions), {{"kind", "subscription"}});
  w.sample(get(m.acl_denied_peer_requests), {{"kind", "peer_request"}});
  w.sample(get(m.acl_denied_history), {{"kind", "history"}});
  counter(w, "zstore_chp_acl_resubscriptions_total",
          "--acl reloads that changed r prefixes: every subscriber was dropped to subscribe again under them",
          get(m.acl_resubscriptions));
  counter(w, "zstore_chp_peer_requests_refused_total",
          "HA pair requests (PEERSNAPSHOT?, CATCHUP?, RECONCILE?) refused: not from the configured peer",
          get(m.peer_requests_refused));
}

// The map (from the store, when there is one) and the last sequence.
void chp_store_metrics(PromWriter& w, const ChpMetrics& m, const storage::ChpStore* store) {
  if (store) gauge(w, "zstore_chp_keys", "keys in the CHP map", store->live_keys());  // maintained: no scan
  if (store) {
    gauge(w, "zstore_chp_key_index_bytes",
          "memory of the CHP key index (the keys of the map and their expiries; spares writes the read of the previous "
          "entry)",
          store->key_index_bytes());
    gauge(w, "zstore_chp_key_index_complete",
          "1 when the CHP key index knows every key of the map (no write reads its previous entry)",
          store->key_index_complete() ? 1 : 0);
  }
  gauge(w, "zstore_chp_last_sequence", "last CHP sequence number assigned", get(m.last_sequence));
}

}  // namespace

void chp_metrics(PromWriter& w, const ChpMetrics& m, const storage::ChpStore* store) {
  chp_request_metrics(w, m);
  chp_loop_metrics(w, m);
  chp_resume_metrics(w, m);
  chp_access_metrics(w, m);
  chp_store_metrics(w, m, store);
}

}  // namespace zstore::server
