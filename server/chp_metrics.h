// ChpMetrics: counters of the CHP reactor, written by its thread and read
// by anyone (metrics endpoint, tests).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

#include "protocol/decode_result.h"

namespace zstore::server {

inline constexpr std::size_t kDecodeErrorKinds = 7;

// The clock of the loop heartbeats (steady, ms); never 0 once running.
inline std::int64_t loop_clock_ms() {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch());
  return ms.count() + 1;
}

struct ChpMetrics {
  std::atomic<std::uint64_t> updates_applied{0};
  std::atomic<std::uint64_t> expiries{0};
  std::atomic<std::uint64_t> snapshots_served{0};
  std::atomic<std::uint64_t> snapshot_keys_sent{0};
  std::atomic<std::uint64_t> write_failures{0};
  std::atomic<std::uint64_t> last_sequence{0};
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
