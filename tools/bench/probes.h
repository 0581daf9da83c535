// The read-side probes of zstore-bench: a CHP snapshot request and a Dafka
// replay (FETCH every record of some partitions from a store).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <zmq.hpp>

namespace zstore::bench {

struct SnapshotTiming {
  std::uint64_t keys = 0;  // KVSYNCs received
  double seconds = 0;      // ICANHAZ sent -> KTHXBAI received
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

// Asks the snapshot socket (tcp://host:P) for `subtree` and counts the
// KVSYNCs until KTHXBAI. Throws std::runtime_error after 300 s.
SnapshotTiming time_snapshot(zmq::context_t& context, const std::string& endpoint, const std::string& subtree);

struct ReplayTiming {
  std::uint64_t records = 0;
  double seconds = 0;         // first FETCH -> last DIRECT-RECORD
  int refetches = 0;          // rounds of FETCHes sent again after 1 s without progress
  std::int64_t start_ns = 0;  // now_ns() at the first FETCH
  std::int64_t end_ns = 0;    // and at the last DIRECT-RECORD
};

// Becomes a Dafka node (beacons to `tower`), waits for the store to connect,
// then FETCHes records 0..count-1 of every partition (in slices of at most
// 1,000,000) from the store's publisher `store`. Re-FETCHes from the first
// missing record after a second without progress; throws
// std::runtime_error after 30 s without progress.
ReplayTiming time_replay(zmq::context_t& context, const std::string& tower, const std::string& store,
                         const std::vector<std::string>& partitions, const std::vector<std::uint64_t>& counts);

}  // namespace zstore::bench
