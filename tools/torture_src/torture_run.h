// run_torture: the kill/restart/verify cycle loop of zstore-torture.
// Starts the cluster and the load (CHP writers, a KVPUB reader, a clone
// client following the map, a Dafka producer, conditional writers on a
// counter: chp_counters.h), then until the time is up:
// waits a random time, SIGKILLs a member, pauses the CHP writers, restarts
// the member, checks a fresh snapshot (chp_verify.h), replays every ACKed
// Dafka record (dafka_load.h), waits for the clone client to resync, and
// resumes; at the end checks the counter. Prints one line per cycle and every violation; returns the exit
// status (0: no violation).
#pragma once

#include <atomic>
#include <ostream>

#include "tools/torture_src/torture_options.h"

namespace zstore::torture {

// stop: set (e.g. by a SIGINT handler) to end the run after the current
// cycle; the servers are killed and the summary printed as usual.
int run_torture(const TortureOptions& options, std::ostream& out, const std::atomic<bool>& stop);

}  // namespace zstore::torture
