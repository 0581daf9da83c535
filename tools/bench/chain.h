// zstore-bench chain: end-to-end latency of an update through read
// replicas (docs/replicas.md). A standalone zstored and --replicas R
// replicas in a chain (r1 follows it, r2 follows r1, ...); a writer sends
// KVSETs to the top's collector at --writer-rate while one subscriber, in
// turn on the top's publisher and on each replica's, measures KVSET send
// -> KVPUB receipt for --duration s: p50/p99 at hop 0 (the top), 1, 2 ...
#pragma once

#include <ostream>

#include "tools/bench/options.h"
#include "tools/bench/report.h"

namespace zstore::bench {

Report chain_mode(const Options& options, std::ostream& log);

}  // namespace zstore::bench
