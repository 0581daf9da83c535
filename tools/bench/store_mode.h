// zstore-bench store: the storage work of one path alone, in process
// (store_paths.h), pinned to --server-cpu: --store-path chp (CHP writes,
// default), chp-floor (only the chp_map entries of those writes: the
// least a durable write costs in RocksDB), dafka (Dafka appends), snapshot (reading the map through a
// snapshot cursor) or replay (reading records back after a restart). It
// reports the CPU each message cost (docs/benchmarks.md). With --vs-relay
// it also measures the path's ZeroMQ-only limit on the same CPU (the relay
// for chp and dafka, the snapshot or fetch source of read_limits.h for the
// read paths) with how busy that CPU was, and reports ratio_bound: the
// highest ratio to that limit a server on one core could reach that paid
// the limit's CPU per message plus this storage's.
#pragma once

#include <ostream>

#include "tools/bench/options.h"
#include "tools/bench/report.h"

namespace zstore::bench {

Report store_mode(const Options& options, std::ostream& log);

}  // namespace zstore::bench
