#include "tools/bench/store_mode.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "tools/bench/cpu_busy.h"
#include "tools/bench/load.h"
#include "tools/bench/modes_common.h"
#include "tools/bench/probes.h"
#include "tools/bench/read_limits.h"
#include "tools/bench/store_paths.h"
#include "tools/bench/system.h"

namespace zstore::bench {
namespace {

bool is_read_path(const Options& o) { return o.store_path == "snapshot" || o.store_path == "replay"; }

StoreRun run_path(const Options& o, const LoadSpec& spec, const std::filesystem::path& dir) {
  if (o.store_path == "dafka") return dafka_writes(o, spec, dir);
  if (o.store_path == "snapshot") return snapshot_reads(o, spec, dir);
  if (o.store_path == "replay") return replay_reads(o, spec, dir);
  if (o.store_path == "chp-floor") return chp_floor_writes(o, spec, dir);
  return chp_writes(o, spec, dir);
}

// A ZeroMQ-only limit's run: its rate, and how busy its CPU was meanwhile.
struct Limit {
  double per_s = 0;
  std::optional<double> busy;
};

Limit measure_limit(const Options& o, const LoadSpec& spec, std::uint64_t messages, std::ostream& log) {
  CpuBusySampler sampler(o.server_cpu);
  Limit limit;
  if (o.store_path == "snapshot") {
    log << "the same snapshot from ZeroMQ alone...\n";
    zmq::context_t context(1);
    SnapshotSource source(o.server_cpu, messages, o.value_bytes);
    SnapshotTiming t = time_snapshot(context, source.endpoint(), "");
    limit.per_s = t.seconds > 0 ? static_cast<double>(t.keys) / t.seconds : 0;
    limit.busy = sampler.busy(t.start_ns, t.end_ns);
  } else if (o.store_path == "replay") {
    log << "the same FETCHes answered by ZeroMQ alone...\n";
    std::vector<std::string> partitions = store_partitions(spec.writers);
    auto writers = static_cast<std::uint64_t>(spec.writers);
    std::vector<std::uint64_t> counts;
    for (std::uint64_t w = 0; w < writers; ++w) counts.push_back(messages / writers + (w < messages % writers ? 1 : 0));
    zmq::context_t context(1);
    FetchSource source(o.server_cpu, o.value_bytes);
    ReplayTiming t = time_replay(context, source.tower(), source.publisher(), partitions, counts);
    limit.per_s = t.seconds > 0 ? static_cast<double>(t.records) / t.seconds : 0;
    limit.busy = sampler.busy(t.start_ns, t.end_ns);
  } else {
    log << "the relay...\n";
    LoadResult r = relay_run(o, spec);
    limit.per_s = r.rate();
    limit.busy = sampler.busy(r.window_start_ns, r.window_end_ns);
  }
  return limit;
}

// The highest ratio to the limit of a server on the limit's one core that
// pays, per message, the limit's CPU (its wall time per message times how
// busy its core was) plus store_us: wall / (busy x wall + store_us), and at
// most 1: a limit whose core was not saturated waited on its client, which
// paces a server the same way, so spare CPU there never makes one faster.
void report_bound(Report& report, const Limit& limit, double store_us) {
  report.set("limit_per_s", limit.per_s, "msg/s");
  double wall_us = limit.per_s > 0 ? 1e6 / limit.per_s : 0;
  report.set("limit_us_per_msg", wall_us, "us");
  // Unknown (no --server-cpu, or a limit shorter than CpuBusySampler::kMinTicks):
  // as if saturated, the lower bound.
  double busy = limit.busy.value_or(1.0);
  if (limit.busy) report.set("limit_core_busy", busy);
  report.set("limit_cpu_us_per_msg", busy * wall_us, "us");
  double bound = wall_us > 0 ? wall_us / (busy * wall_us + store_us) : 0;
  report.set("ratio_bound", std::min(bound, 1.0));
}

}  // namespace

Report store_mode(const Options& o, std::ostream& log) {
  Report report("store");
  bool dafka = o.store_path == "dafka" || o.store_path == "replay";
  LoadSpec spec = spec_of(o, dafka ? Shape::kDafka : Shape::kChp);
  auto dir = std::filesystem::temp_directory_path() / ("zstore-bench-store-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  log << "store path " << o.store_path << ": " << (dafka ? o.records : o.keys) << " messages...\n";
  pin_current_thread(o.server_cpu);
  StoreRun run;
  try {
    run = run_path(o, spec, dir);
  } catch (...) {
    std::filesystem::remove_all(dir);
    throw;
  }
  std::filesystem::remove_all(dir);
  pin_current_thread(o.client_cpu);
  auto messages = static_cast<double>(run.messages);
  report.set_text("store_path", o.store_path);
  if (o.store_path == "chp" || o.store_path == "chp-floor") {
    report.set_text("key_order", o.key_order);
    report.set("key_space", static_cast<double>(o.key_space));
  }
  if (o.store_path == "chp") report.set("prior_reads", static_cast<double>(run.prior_reads));
  report.set("value_bytes", static_cast<double>(o.value_bytes), "B");
  report.set("messages", messages);
  if (!is_read_path(o)) report.set("batch", static_cast<double>(o.batch));
  report.set("per_s", run.seconds > 0 ? messages / run.seconds : 0, "msg/s");
  report.set("store_thread_us_per_msg", run.thread_cpu * 1e6 / messages, "us");
  report.set("store_cpu_us_per_msg", run.process_cpu * 1e6 / messages, "us");
  if (o.vs_relay) {
    // Writes leave flushes and compactions that zstored's core runs too: the
    // process's CPU. A read path's cost is the reading thread's alone.
    double store_us = (is_read_path(o) ? run.thread_cpu : run.process_cpu) * 1e6 / messages;
    report_bound(report, measure_limit(o, spec, run.messages, log), store_us);
  }
  return report;
}

}  // namespace zstore::bench
