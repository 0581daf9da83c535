// The read benchmarks of zstore-bench: replay (Dafka records produced, the
// store restarted, every record FETCHed back) and snapshot (a CHP map
// loaded, then a full and a subtree snapshot taken while a writer goes on).
// With --vs-relay each is compared with the same reads answered by ZeroMQ
// alone (read_limits.h). Failures throw std::runtime_error.
#pragma once

#include <ostream>

#include "tools/bench/options.h"
#include "tools/bench/report.h"

namespace zstore::bench {

Report replay_mode(const Options& o, std::ostream& log);
Report snapshot_mode(const Options& o, std::ostream& log);

}  // namespace zstore::bench
