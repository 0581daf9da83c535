// zstore-bench restart: load --keys CHP keys into a zstored of its own,
// SIGKILL it, start it again on the same data dir and time exec -> the
// first KTHXBAI (a subtree snapshot of no key), with the write-ahead log's
// size before the kill and right after the restart (docs/benchmarks.md).
#pragma once

#include <ostream>

#include "tools/bench/options.h"
#include "tools/bench/report.h"

namespace zstore::bench {

Report restart_mode(const Options& options, std::ostream& log);

}  // namespace zstore::bench
