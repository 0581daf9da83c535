// DafkaMetrics: counters of the Dafka store reactor, written by its thread
// and read by anyone (logs, tests).
#pragma once

#include <atomic>
#include <cstdint>

#include "server/reactor/loop_metrics.h"

namespace zstore::server {

struct DafkaMetrics {
  std::atomic<std::uint64_t> records_stored{0};
  std::atomic<std::uint64_t> duplicates{0};
  std::atomic<std::uint64_t> too_far{0};          // refused: too far beyond the head
  std::atomic<std::uint64_t> gaps_skipped{0};     // gaps given up after their FETCH retries
  std::atomic<std::uint64_t> offsets_skipped{0};  // offsets in those gaps
  std::atomic<std::uint64_t> acks_sent{0};
  std::atomic<std::uint64_t> fetches_sent{0};
  std::atomic<std::uint64_t> fetches_served{0};
  std::atomic<std::uint64_t> direct_records_sent{0};
  std::atomic<std::uint64_t> direct_heads_sent{0};
  std::atomic<std::uint64_t> store_hellos_sent{0};
  std::atomic<std::uint64_t> sends_dropped{0};  // would-block on a message the protocol retries
  std::atomic<std::uint64_t> write_failures{0};
  std::atomic<std::uint64_t> invalid{0};  // decoded but unusable (bad address, topic name, ...)
  // Records (and HEADs) of new partitions refused by a partition limit
  // (server/dafka/dafka_limits.h), by PartitionRefusal; index 0 unused.
  std::atomic<std::uint64_t> refused_by_limit[5] = {};
  // The limits, as configured (0 = none), for /metrics.
  std::atomic<std::uint64_t> limit_topics{0};
  std::atomic<std::uint64_t> limit_partitions{0};
  std::atomic<std::uint64_t> limit_partitions_per_topic{0};
  std::atomic<std::uint64_t> limit_new_partitions{0};
  std::atomic<std::uint64_t> limit_interval_ms{0};
  std::atomic<std::uint64_t> peers{0};  // publishers our SUB is connected to
  std::atomic<std::uint64_t> peers_refused{
      0};  // announced publishers outside --dafka-peers or (CURVE) without an allowed key
  std::atomic<std::uint64_t> peer_reconnects{0};  // connections to publishers opened again after they ended
  MalformedCounts malformed;
  std::atomic<std::uint64_t> loop_errors{0};  // events that failed and were skipped
  std::atomic<std::uint64_t> loop_turns{0};   // reactor turns (an idle store makes a few per second)
  // Liveness: steady-clock ms (loop_clock_ms()) of the reactor's latest
  // turn; set by start(), 0 after the last turn.
  std::atomic<std::int64_t> loop_heartbeat_ms{0};
  std::atomic<std::int64_t> ports_unbound{0};  // see ChpMetrics::ports_unbound
};

}  // namespace zstore::server
