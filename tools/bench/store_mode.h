// zstore-bench store: the CHP write path's storage alone, in process. It
// applies --keys writes (the chp mode's keys, --key-order and --key-space,
// --value-bytes values) to a ChpStore on a temporary database in batches
// of --batch, pinned to --server-cpu, and reports the CPU each write cost
// (docs/benchmarks.md). With --vs-relay it also runs the relay and reports
// ratio_bound: the highest ratio to the relay a server could reach that
// paid the relay's whole cost per message plus this storage cost.
#pragma once

#include <ostream>

#include "tools/bench/options.h"
#include "tools/bench/report.h"

namespace zstore::bench {

Report store_mode(const Options& options, std::ostream& log);

}  // namespace zstore::bench
