// What several zstore-bench modes share (modes.cc): the load an Options
// describes, and the relay run with that load (the physical limit).
#pragma once

#include "tools/bench/load.h"
#include "tools/bench/options.h"

namespace zstore::bench {

LoadSpec spec_of(const Options& o, Shape shape);

// The in-process relay (relay.h) on --server-cpu carrying spec's load.
LoadResult relay_run(const Options& o, const LoadSpec& spec);

}  // namespace zstore::bench
