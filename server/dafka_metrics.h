// DafkaMetrics: counters of the Dafka store reactor, written by its thread
// and read by anyone (logs, tests).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "protocol/decode_result.h"
#include "server/chp_metrics.h"

namespace zstore::server {

struct DafkaMetrics {
  std::atomic<std::uint64_t> records_stored{0};
  std::atomic<std::uint64_t> duplicates{0};
  std::atomic<std::uint64_t> too_far{0};         // refused: too far beyond the head
  std::atomic<std::uint64_t> acks_sent{0};
  std::atomic<std::uint64_t> fetches_sent{0};
  std::atomic<std::uint64_t> fetches_served{0};
  std::atomic<std::uint64_t> direct_records_sent{0};
  std::atomic<std::uint64_t> direct_heads_sent{0};
  std::atomic<std::uint64_t> store_hellos_sent{0};
  std::atomic<std::uint64_t> sends_dropped{0};   // would-block on a message the protocol retries
  std::atomic<std::uint64_t> write_failures{0};
  std::atomic<std::uint64_t> invalid{0};         // decoded but unusable (bad address, ...)
  std::atomic<std::uint64_t> peers{0};           // publishers our SUB is connected to
  std::array<std::atomic<std::uint64_t>, kDecodeErrorKinds> malformed{};
  // Liveness: steady-clock ms (loop_clock_ms()) of the reactor's latest
  // turn, 0 before the first and after the last one.
  std::atomic<std::int64_t> loop_heartbeat_ms{0};

  void count_malformed(protocol::DecodeErrorKind kind) {
    malformed[static_cast<std::size_t>(kind)].fetch_add(1, std::memory_order_relaxed);
  }
  std::uint64_t malformed_total() const {
    std::uint64_t n = 0;
    for (const auto& m : malformed) n += m.load(std::memory_order_relaxed);
    return n;
  }
};

}  // namespace zstore::server
