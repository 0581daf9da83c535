// zstore-bench storm: N clients mirror a K-key map while a writer updates
// 1 % of its keys; the serving zstored is SIGKILLed (the active of an HA
// pair with --ha, else one server that is restarted at once) and every
// client reconnects and asks for a snapshot with its last sequence (resume)
// or without (full). Measures the time from the kill until every client is
// current again and the serving member's CPU over that window.
// docs/benchmarks.md describes the method.
#pragma once

#include <ostream>

#include "tools/bench/options.h"
#include "tools/bench/report.h"

namespace zstore::bench {

Report storm_mode(const Options& options, std::ostream& log);

}  // namespace zstore::bench
