#include "server/http/metrics_text.h"

#include <algorithm>
#include <array>
#include <cstdio>

#include "protocol/dafka_codec.h"
#include "protocol/decode_result.h"
#include "server/dafka/dafka_limits.h"
#include "server/http/db_admin.h"
#include "server/http/metric_families.h"
#include "server/http/metrics_chp.h"

namespace zstore::server {
namespace {

std::string escape_label(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out.push_back(c);
  }
  return out;
}

// From counters the log maintains (no scan). The `top` topics holding the
// most bytes get a sample each; the others, and any name that is not
// printable UTF-8 (stored by an older zstored), are summed under topic=""
// (no topic has that name), so a scrape stays small with any number of
// topics.
void dafka_log_metrics(PromWriter& w, const storage::DafkaLog& log, std::size_t top) {
  gauge(w, "zstore_dafka_partitions", "Dafka partitions (subject, publisher) stored", log.partition_count());
  auto topics = log.topic_totals();
  gauge(w, "zstore_dafka_topics", "Dafka topics stored", topics.size());
  storage::DafkaTopicTotals other{"", 0, 0, 0};
  std::uint64_t unlisted = 0;
  auto add_to_other = [&](const storage::DafkaTopicTotals& t) {
    ++unlisted;
    other.partitions += t.partitions;
    other.records += t.records;
    other.bytes += t.bytes;
  };
  auto invalid = std::partition(topics.begin(), topics.end(), [](const storage::DafkaTopicTotals& t) {
    return protocol::dafka::is_valid_topic_name(t.topic);
  });
  std::for_each(invalid, topics.end(), add_to_other);
  topics.erase(invalid, topics.end());
  if (topics.size() > top) {
    auto larger = [](const storage::DafkaTopicTotals& a, const storage::DafkaTopicTotals& b) {
      return a.bytes != b.bytes ? a.bytes > b.bytes : a.topic < b.topic;
    };
    std::nth_element(topics.begin(), topics.begin() + static_cast<std::ptrdiff_t>(top), topics.end(), larger);
    std::for_each(topics.begin() + static_cast<std::ptrdiff_t>(top), topics.end(), add_to_other);
    topics.resize(top);
    std::sort(topics.begin(), topics.end(),
              [](const storage::DafkaTopicTotals& a, const storage::DafkaTopicTotals& b) { return a.topic < b.topic; });
  }
  if (unlisted > 0) topics.push_back(other);
  gauge(w, "zstore_dafka_topics_unlisted", "Dafka topics summed under topic=\"\" in the per-topic families", unlisted);
  w.family("zstore_dafka_topic_records", "gauge",
           "Dafka records held, by topic (the largest topics; the rest under topic=\"\")");
  for (const auto& t : topics) w.sample(t.records, {{"topic", t.topic}});
  w.family("zstore_dafka_topic_bytes", "gauge",
           "Dafka record content bytes held, by topic (as zstore_dafka_topic_records)");
  for (const auto& t : topics) w.sample(t.bytes, {{"topic", t.topic}});
  w.family("zstore_dafka_topic_partitions", "gauge", "Dafka partitions, by topic (as zstore_dafka_topic_records)");
  for (const auto& t : topics) w.sample(t.partitions, {{"topic", t.topic}});
  counter(w, "zstore_dafka_retention_deleted_records_total", "Dafka records deleted by retention",
          log.records_retained_away());
  counter(w, "zstore_dafka_retention_dropped_partitions_total",
          "idle Dafka partitions removed by retention (nothing left, silent longer than the age limit)",
          log.partitions_dropped());
}

void dafka_limits(PromWriter& w, const DafkaMetrics& m) {
  w.family("zstore_dafka_limit", "gauge",
           "Dafka store limits on new partitions (0 = none; new_partitions is per limit interval_ms)");
  w.sample(get(m.limit_topics), {{"limit", "topics"}});
  w.sample(get(m.limit_partitions), {{"limit", "partitions"}});
  w.sample(get(m.limit_partitions_per_topic), {{"limit", "partitions_per_topic"}});
  w.sample(get(m.limit_new_partitions), {{"limit", "new_partitions"}});
  w.sample(get(m.limit_interval_ms), {{"limit", "interval_ms"}});
  w.family("zstore_dafka_refused_by_limit_total", "counter",
           "Dafka records and HEADs of new partitions refused (not stored), by the limit they would pass");
  for (auto r : {PartitionRefusal::kTopics, PartitionRefusal::kPartitions, PartitionRefusal::kPartitionsInTopic,
                 PartitionRefusal::kNewPartitions}) {
    w.sample(get(m.refused_by_limit[static_cast<int>(r)]), {{"limit", std::string(to_string(r))}});
  }
}

void dafka_metrics(PromWriter& w, const DafkaMetrics& m, const storage::DafkaLog* log, std::size_t top_topics) {
  counter(w, "zstore_dafka_records_stored_total", "Dafka records persisted", get(m.records_stored));
  counter(w, "zstore_dafka_duplicates_total", "Dafka records received again (already stored)", get(m.duplicates));
  counter(w, "zstore_dafka_records_too_far_total",
          "Dafka records refused (not stored): more than 100000 offsets past their partition's next expected offset",
          get(m.too_far));
  counter(w, "zstore_dafka_acks_sent_total", "Dafka ACKs sent after a commit", get(m.acks_sent));
  counter(w, "zstore_dafka_fetches_sent_total", "Dafka FETCHes sent for gaps", get(m.fetches_sent));
  counter(w, "zstore_dafka_fetches_served_total", "Dafka FETCHes answered from disk", get(m.fetches_served));
  counter(w, "zstore_dafka_write_failures_total", "Dafka records the database refused (not ACKed)",
          get(m.write_failures));
  counter(w, "zstore_dafka_loop_errors_total", "Dafka store reactor events that failed, were logged and skipped",
          get(m.loop_errors));
  counter(w, "zstore_dafka_loop_turns_total", "Dafka store reactor turns (an idle store makes a few per second)",
          get(m.loop_turns));
  counter(w, "zstore_dafka_sends_dropped_total", "Dafka messages dropped on a full send queue", get(m.sends_dropped));
  counter(w, "zstore_dafka_invalid_total", "Dafka messages decoded but unusable", get(m.invalid));
  counter(w, "zstore_dafka_gaps_skipped_total", "Dafka gaps given up after their FETCH retries", get(m.gaps_skipped));
  counter(w, "zstore_dafka_offsets_skipped_total", "Dafka offsets in the gaps given up", get(m.offsets_skipped));
  malformed(w, "zstore_dafka_malformed_total", "malformed Dafka messages dropped, by kind", m);
  counter(w, "zstore_dafka_peers_refused_total",
          "announced publishers not connected to: outside --dafka-peers, or with CURVE a key not allowed",
          get(m.peers_refused));
  counter(w, "zstore_dafka_peer_reconnects_total",
          "connections to publishers opened again after they ended: a network error, or a frame over "
          "--dafka-max-message-bytes",
          get(m.peer_reconnects));
  dafka_limits(w, m);
  if (log) dafka_log_metrics(w, *log, top_topics);
  gauge(w, "zstore_dafka_peers", "Dafka publishers the store is connected to", get(m.peers));
}

void http_metrics(PromWriter& w, const HttpMetrics& m) {
  gauge(w, "zstore_http_connections", "HTTP connections open now", get(m.connections));
  gauge(w, "zstore_http_max_connections", "--http-max-connections: the cap on open HTTP connections",
        get(m.max_connections));
  counter(w, "zstore_http_connections_accepted_total", "HTTP connections accepted", get(m.accepted));
  counter(w, "zstore_http_connections_evicted_total",
          "HTTP connections closed before their request was complete, to let a newer one in at the cap",
          get(m.evicted));
  counter(w, "zstore_http_connections_refused_total",
          "HTTP connections closed at accept: the cap was reached and every open one was being answered",
          get(m.refused));
  counter(w, "zstore_http_timeouts_total", "HTTP connections closed by the head, body or write deadline",
          get(m.timed_out));
}

void ha_metric(PromWriter& w, const std::string& state) {
  w.family("zstore_ha_state", "gauge", "CHP high-availability state: 1 for the current one");
  for (const char* s : {"standalone", "primary", "backup", "active", "passive"}) {
    w.sample(std::uint64_t{state == s ? 1u : 0u}, {{"state", s}});
  }
}

// Seconds since each enabled reactor loop last turned (what /healthz
// checks): for a loop that never turned or has stopped, since zstored
// started, so an alert on the age fires for a dead loop too. Then each
// loop's ports not bound again yet (bound_endpoint.h).
void loop_ages(PromWriter& w, const ServerView& view, double uptime) {
  w.family("zstore_loop_heartbeat_age_seconds", "gauge", "seconds since the reactor loop last turned, by loop");
  auto age = [uptime](const std::atomic<std::int64_t>& heartbeat) {
    std::int64_t beat = heartbeat.load(std::memory_order_relaxed);
    return beat == 0 ? uptime : static_cast<double>(loop_clock_ms() - beat) / 1000.0;
  };
  if (view.chp) w.sample(age(view.chp->loop_heartbeat_ms), {{"loop", "chp"}});
  if (view.dafka) w.sample(age(view.dafka->loop_heartbeat_ms), {{"loop", "dafka"}});
  if (view.tower) w.sample(age(view.tower->loop_heartbeat_ms), {{"loop", "tower"}});
  w.family("zstore_ports_unbound", "gauge",
           "ports unbound to end their connections (a CURVE key removed, new ACL read rules) and not bound again yet, "
           "by loop");
  if (view.chp) w.sample(static_cast<double>(view.chp->ports_unbound.load()), {{"loop", "chp"}});
  if (view.dafka) w.sample(static_cast<double>(view.dafka->ports_unbound.load()), {{"loop", "dafka"}});
  if (view.tower) w.sample(static_cast<double>(view.tower->ports_unbound.load()), {{"loop", "tower"}});
}

// The connection caps and what they refused, by port (connection_watch.h).
void connection_metrics(PromWriter& w, const ConnectionWatch& watch) {
  gauge(w, "zstore_connections_limit", "TCP connections accepted at once across the ZeroMQ ports (--max-connections)",
        watch.limits().total);
  gauge(w, "zstore_connections_per_port_limit", "TCP connections accepted at once on one ZeroMQ port; 0 = none",
        watch.limits().per_port);
  auto per_port = [&](std::string_view name, std::string_view type, std::string_view help,
                      const std::atomic<std::uint64_t> WatchedPort::*field) {
    w.family(name, type, help);
    for (const auto& p : watch.ports()) w.sample((p.*field).load(std::memory_order_relaxed), {{"port", p.name}});
  };
  per_port("zstore_connections", "gauge", "TCP connections open, by port", &WatchedPort::connections);
  per_port("zstore_connections_refused_total", "counter",
           "TCP connections closed as they arrived because a connection cap was reached, by port",
           &WatchedPort::refused);
  per_port("zstore_connections_evicted_total", "counter",
           "TCP connections ended at a connection cap, to let a newer one in, because they had sent no ZMTP "
           "greeting a second after their accept, by port",
           &WatchedPort::evicted);
  per_port("zstore_slow_subscribers_dropped_total", "counter",
           "subscriber connections ended for falling more than --subscriber-buffer-bytes behind, by port",
           &WatchedPort::slow_dropped);
}

// A gauge with one sample per column family.
void per_column(PromWriter& w, std::string_view name, std::string_view help, const std::vector<ColumnSizes>& columns,
                std::uint64_t ColumnSizes::*field) {
  w.family(name, "gauge", help);
  for (const auto& c : columns) w.sample(c.*field, {{"column_family", c.name}});
}

// How far RocksDB's flushes and compactions are behind the writes, and
// whether it holds writes back (storage/db/background_pacing.h).
void storage_backlog(PromWriter& w, const std::vector<ColumnSizes>& columns, const WriteStalls& stalls) {
  per_column(w, "zstore_rocksdb_level0_files", "level-0 table files (writes slow down at 20), by column family",
             columns, &ColumnSizes::level0_files);
  per_column(w, "zstore_rocksdb_immutable_memtables", "memtables waiting for or in a flush, by column family", columns,
             &ColumnSizes::immutable_memtables);
  per_column(w, "zstore_rocksdb_pending_compaction_bytes",
             "RocksDB's estimate of the bytes compaction still owes, by column family", columns,
             &ColumnSizes::pending_compaction_bytes);
  gauge(w, "zstore_rocksdb_write_delayed", "1 while RocksDB slows writes down for a flush or compaction behind",
        stalls.delayed ? 1u : 0u);
  gauge(w, "zstore_rocksdb_write_stopped", "1 while RocksDB stops writes until a flush or compaction catches up",
        stalls.stopped ? 1u : 0u);
  counter(w, "zstore_rocksdb_write_delays_total", "times a column family began to slow writes down", stalls.delays);
  counter(w, "zstore_rocksdb_write_stops_total", "times a column family began to stop writes", stalls.stops);
  if (!stalls.paced) return;
  gauge(w, "zstore_rocksdb_background_pacing_lifted",
        "1 while flushes and compactions write unpaced (writes stalled, or memtables waiting for a flush)",
        stalls.pacing_lifted ? 1u : 0u);
  counter(w, "zstore_rocksdb_background_pacing_lifts_total", "times the pacing of flushes and compactions was lifted",
          stalls.pacing_lifts);
}

// RocksDB's memory against its two limits (storage/db/database.h).
void rocksdb_memory(PromWriter& w, const storage::MemoryUse& use) {
  gauge(w, "zstore_rocksdb_memtable_budget_bytes", "--memtable-budget-bytes: writes wait while the memtables hold it",
        use.memtable_budget_bytes);
  gauge(w, "zstore_rocksdb_memtable_budget_used_bytes",
        "memory of all memtables as the budget counts it (also those flushed but still read by an iterator)",
        use.memtable_bytes);
  gauge(w, "zstore_rocksdb_block_cache_capacity_bytes", "--block-cache-bytes: the block cache all families share",
        use.block_cache_capacity_bytes);
  gauge(w, "zstore_rocksdb_block_cache_bytes", "blocks in the shared block cache (data, index and filter)",
        use.block_cache_bytes);
  gauge(w, "zstore_rocksdb_block_cache_pinned_bytes", "of those, blocks in use by readers now",
        use.block_cache_pinned_bytes);
}

}  // namespace

void PromWriter::family(std::string_view name, std::string_view type, std::string_view help) {
  name_ = name;
  out_ += "# HELP " + name_ + " " + std::string(help) + "\n";
  out_ += "# TYPE " + name_ + " " + std::string(type) + "\n";
}

void PromWriter::begin_sample(const Labels& labels) {
  out_ += name_;
  if (!labels.empty()) {
    out_ += "{";
    for (std::size_t i = 0; i < labels.size(); ++i) {
      out_ += (i ? "," : "") + labels[i].first + "=\"" + escape_label(labels[i].second) + "\"";
    }
    out_ += "}";
  }
  out_ += " ";
}

void PromWriter::sample(std::uint64_t value, const Labels& labels) {
  begin_sample(labels);
  out_ += std::to_string(value) + "\n";
}

void PromWriter::sample(double value, const Labels& labels) {
  begin_sample(labels);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", value);
  out_ += std::string(buf) + "\n";
}

std::string render_metrics(const ServerView& view) {
  PromWriter w;
  auto uptime = std::chrono::duration<double>(std::chrono::steady_clock::now() - view.started).count();
  w.family("zstore_uptime_seconds", "gauge", "seconds since zstored started");
  w.sample(uptime);
  if (view.chp) chp_metrics(w, *view.chp, view.chp_store);
  if (view.dafka) dafka_metrics(w, *view.dafka, view.dafka_log, view.dafka_metrics_topics);
  if (view.tower) {
    counter(w, "zstore_tower_beacons_forwarded_total", "beacons the embedded tower forwarded",
            get(view.tower->beacons_forwarded));
    counter(w, "zstore_tower_malformed_total", "malformed beacons the embedded tower dropped",
            get(view.tower->malformed));
    counter(w, "zstore_tower_loop_errors_total", "embedded tower events that failed, were logged and skipped",
            get(view.tower->loop_errors));
  }
  loop_ages(w, view, uptime);
  if (view.connections) connection_metrics(w, *view.connections);
  ha_metric(w, view.ha_state ? view.ha_state() : "standalone");
  if (view.disk) {
    gauge(w, "zstore_disk_free_bytes", "free bytes on the data dir's file system (last check)",
          view.disk->free_bytes());
    gauge(w, "zstore_disk_min_free_bytes", "--min-free-bytes: writes are refused below it",
          view.disk->min_free_bytes());
    gauge(w, "zstore_disk_writes_refused", "1 while writes are refused for lack of disk space",
          view.disk->low() ? 1u : 0u);
    counter(w, "zstore_disk_low_total", "times the free space fell below --min-free-bytes", view.disk->low_episodes());
  }
  if (view.http) http_metrics(w, *view.http);
  if (view.auth) {
    w.family("zstore_auth_failures_total", "counter",
             "connections or requests refused for authentication (CURVE key not allowed, missing HTTP token), by port");
    for (const auto& [port, n] : view.auth->failures()) w.sample(n, {{"port", port}});
    w.family("zstore_auth_key_revocations_total", "counter",
             "reloads of --curve-allow that removed a key (each ends every connection to the CURVE ports)");
    w.sample(view.auth->revocations.count());
  }
  auto columns = column_sizes(*view.db);
  per_column(w, "zstore_rocksdb_sst_bytes", "size of the live SST files, by column family", columns,
             &ColumnSizes::sst_bytes);
  per_column(w, "zstore_rocksdb_memtable_bytes", "size of the memtables, by column family", columns,
             &ColumnSizes::memtable_bytes);
  rocksdb_memory(w, view.db->memory_use());
  storage_backlog(w, columns, write_stalls(*view.db));
  return w.text();
}

}  // namespace zstore::server
