// What several zstore-bench modes share (modes.cc): the load an Options
// describes, the relay run with that load (the physical limit), the server
// a run measures and the report lines every mode writes alike.
#pragma once

#include <sys/types.h>

#include <memory>
#include <ostream>
#include <string>

#include "tools/bench/latency.h"
#include "tools/bench/load.h"
#include "tools/bench/options.h"
#include "tools/bench/report.h"
#include "tools/bench/server_process.h"

namespace zstore::bench {

LoadSpec spec_of(const Options& o, Shape shape);

// The in-process relay (relay.h) on --server-cpu carrying spec's load.
LoadResult relay_run(const Options& o, const LoadSpec& spec);

// The server of a run: a running one (--server) or our own.
struct Server {
  ServerPorts ports;
  std::unique_ptr<ServerProcess> process;
  pid_t external_pid = 0;  // --server-pid
  pid_t pid() const { return process ? process->pid() : external_pid; }
};

class BenchCurve;
// Our zstored (started here, stopped with the Server) or, with --server
// (--dafka-server for dafka and replay), the one running there. curve: our
// zstored runs with these keys, and clients use them.
Server open_server(const Options& o, std::ostream& log, const BenchCurve* curve = nullptr);

// prefix + "p50_ms", "p99_ms", "p999_ms" of latencies.
void report_latency(Report& report, const std::string& prefix, const Latencies& latencies);
// server_rss_mib and server_hwm_mib of process pid (nothing for pid <= 0).
void report_memory(Report& report, pid_t pid);
// name + "_per_s" and "ratio_vs_" + name: per_s against the limit.
void set_ratio(Report& report, const std::string& name, double limit_per_s, const std::string& unit);

}  // namespace zstore::bench
