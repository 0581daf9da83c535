// What the embedded tower (server/dafka/tower.h) reports: written by its thread,
// read by anyone (metrics endpoint, /healthz, tests).
#pragma once

#include <atomic>
#include <cstdint>

namespace zstore::server {

struct TowerMetrics {
  std::atomic<std::uint64_t> beacons_forwarded{0};
  std::atomic<std::uint64_t> malformed{0};
  std::atomic<std::uint64_t> loop_errors{0};       // events that failed and were skipped
  std::atomic<std::int64_t> loop_heartbeat_ms{0};  // see ChpMetrics::loop_heartbeat_ms
  std::atomic<std::int64_t> ports_unbound{0};      // see ChpMetrics::ports_unbound
};

}  // namespace zstore::server
