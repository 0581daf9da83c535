// The zstore-bench modes (storm: tools/bench/storm.h; replay and snapshot:
// read_modes.h). Each runs its measurement with the options and returns the
// Report; progress notes go to `log` (stderr). Failures
// (a server that does not start, a stalled run) throw std::runtime_error.
#pragma once

#include <ostream>

#include "tools/bench/options.h"
#include "tools/bench/report.h"

namespace zstore::bench {

Report run_mode(const Options& options, std::ostream& log);

}  // namespace zstore::bench
