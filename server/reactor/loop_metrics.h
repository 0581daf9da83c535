// What every reactor reports besides its own counters: the messages it
// dropped as malformed, by kind, and the heartbeat /healthz reads. Written
// by the reactor's thread, read by anyone (metrics endpoint, logs, tests).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

#include "protocol/decode_result.h"

namespace zstore::server {

inline constexpr std::size_t kDecodeErrorKinds = 7;  // protocol::DecodeErrorKind's values
static_assert(static_cast<std::size_t>(protocol::DecodeErrorKind::kTooLarge) + 1 == kDecodeErrorKinds,
              "a new DecodeErrorKind needs its counter");

// The clock of the loop heartbeats (steady, ms); never 0 once running.
inline std::int64_t loop_clock_ms() {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch());
  return ms.count() + 1;
}

// Malformed messages dropped, by protocol::DecodeErrorKind.
struct MalformedCounts {
  std::array<std::atomic<std::uint64_t>, kDecodeErrorKinds> by_kind{};

  void count(protocol::DecodeErrorKind kind) {
    by_kind[static_cast<std::size_t>(kind)].fetch_add(1, std::memory_order_relaxed);
  }
  std::uint64_t total() const {
    std::uint64_t n = 0;
    for (const auto& m : by_kind) n += m.load(std::memory_order_relaxed);
    return n;
  }
};

}  // namespace zstore::server
