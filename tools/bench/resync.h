// zstore-bench resync: an HA pair whose active holds --keys keys; the
// passive is killed (-9) and restarted, so it replaces its whole map with
// the active's snapshot, while a writer updates the active at
// --writer-rate. Reports the resync time, the writer's latency meanwhile
// and the passive CHP loop's longest turn (polled from its /healthz).
#pragma once

#include <ostream>

#include "tools/bench/options.h"
#include "tools/bench/report.h"

namespace zstore::bench {

Report resync_mode(const Options& options, std::ostream& log);

}  // namespace zstore::bench
