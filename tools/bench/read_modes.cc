#include "tools/bench/read_modes.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "tools/bench/modes_common.h"
#include "tools/bench/probes.h"
#include "tools/bench/read_limits.h"
#include "tools/bench/scrape.h"
#include "tools/bench/system.h"
#include "tools/bench/transports.h"

namespace zstore::bench {
namespace {

// The partitions the load's writers published into: learnt from the board
// through a transport that remembers them.
class RecordingDafkaTransport : public DafkaTransport {
 public:
  using DafkaTransport::DafkaTransport;
  void receive(Board& board, const std::vector<std::string>& partitions) override {
    partitions_ = partitions;
    DafkaTransport::receive(board, partitions);
  }
  std::vector<std::string> partitions_;
};

// The read limits run on zstored's CPU: zstored goes first, so that its
// memtable flushes and the compactions a load or a restart started do not
// slow the ZeroMQ-only source down (they are zstored's costs, not ZeroMQ's).
void stop_before_limit(Server& server) {
  if (server.process) server.process->kill_hard();
}

// The median of 5 scrapes of /metrics (our own zstored only: it has an
// HTTP port), and the key count the scrape reports.
void report_scrape(Report& report, const Server& server, std::ostream& log) {
  if (!server.process) return;
  log << "scraping /metrics...\n";
  std::vector<double> ms;
  double keys = -1;
  for (int i = 0; i < 5; ++i) {
    ScrapeTiming t = time_metrics_scrape(server.ports.host, server.ports.http);
    ms.push_back(t.ms);
    keys = t.chp_keys;
  }
  std::sort(ms.begin(), ms.end());
  report.set("metrics_scrape_ms", ms[ms.size() / 2], "ms");
  report.set("metrics_chp_keys", keys);
}

}  // namespace

Report replay_mode(const Options& o, std::ostream& log) {
  Report report("replay");
  Server server = open_server(o, log);
  zmq::context_t context(1);
  RecordingDafkaTransport transport(context, server.ports.endpoint(server.ports.tower),
                                    server.ports.endpoint(server.ports.dafka));
  LoadSpec spec = spec_of(o, Shape::kDafka);
  spec.total = o.records;
  spec.warmup_s = 0;
  spec.rate = 0;
  log << "producing " << o.records << " records...\n";
  LoadResult produced = run_load(spec, transport);
  report.set("records", static_cast<double>(o.records));
  report.set("produce_per_s", produced.rate(), "rec/s");
  log << "restarting the store...\n";
  server.process->stop();
  server.process->start();
  std::vector<std::uint64_t> counts;
  for (int w = 0; w < spec.writers; ++w) {
    counts.push_back(spec.total / static_cast<std::uint64_t>(spec.writers) +
                     (static_cast<std::uint64_t>(w) < spec.total % static_cast<std::uint64_t>(spec.writers) ? 1 : 0));
  }
  ReplayTiming replay = time_replay(context, server.ports.endpoint(server.ports.tower),
                                    server.ports.endpoint(server.ports.dafka), transport.partitions_, counts);
  auto cpu_after = cpu_seconds(server.pid());
  if (cpu_after && replay.records > 0) {
    // The restarted process's CPU until the last record: opening the store,
    // the replay, and the compactions the restart started meanwhile.
    report.set("server_cpu_us_per_msg", *cpu_after * 1e6 / static_cast<double>(replay.records), "us");
  }
  report.set("replayed", static_cast<double>(replay.records));
  report.set("refetches", static_cast<double>(replay.refetches));
  report.set("replay_seconds", replay.seconds, "s");
  report.set("per_s", replay.seconds > 0 ? static_cast<double>(replay.records) / replay.seconds : 0, "rec/s");
  report_memory(report, server.pid());
  if (o.vs_relay) {
    log << "the same FETCHes answered by ZeroMQ alone...\n";
    stop_before_limit(server);
    FetchSource source(o.server_cpu, o.value_bytes);
    ReplayTiming limit = time_replay(context, source.tower(), source.publisher(), transport.partitions_, counts);
    report.set("relay_refetches", static_cast<double>(limit.refetches));
    set_ratio(report, "relay", limit.seconds > 0 ? static_cast<double>(limit.records) / limit.seconds : 0, "rec/s");
  }
  return report;
}

Report snapshot_mode(const Options& o, std::ostream& log) {
  Report report("snapshot");
  Server server = open_server(o, log);
  zmq::context_t context(1);
  PubSubTransport transport(context, server.ports.endpoint(server.ports.chp + 2),
                            server.ports.endpoint(server.ports.chp + 1));
  LoadSpec load = spec_of(o, Shape::kChp);
  load.total = o.keys;
  load.key_space = 0;
  load.random_keys = false;  // every key once
  load.rate = 0;
  load.warmup_s = 0;
  log << "loading " << o.keys << " keys...\n";
  LoadResult loaded = run_load(load, transport);
  report.set("keys", static_cast<double>(o.keys));
  report.set("value_bytes", static_cast<double>(o.value_bytes), "B");
  report.set("load_per_s", loaded.rate(), "msg/s");
  report_memory(report, server.pid());
  report_scrape(report, server, log);

  BackgroundLoad writer(background_writer_spec(o.value_bytes, o.writer_rate), transport);
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the writer's handshake and first updates
  log << "full snapshot...\n";
  auto cpu_before = server.pid() > 0 ? cpu_seconds(server.pid()) : std::nullopt;
  SnapshotTiming full = time_snapshot(context, server.ports.endpoint(server.ports.chp), "");
  auto cpu_after = server.pid() > 0 ? cpu_seconds(server.pid()) : std::nullopt;
  log << "subtree snapshot...\n";
  SnapshotTiming sub = time_snapshot(context, server.ports.endpoint(server.ports.chp), o.subtree);
  LoadResult background = writer.stop();
  report.set("full_keys", static_cast<double>(full.keys));
  report.set("full_seconds", full.seconds, "s");
  report.set("per_s", full.seconds > 0 ? static_cast<double>(full.keys) / full.seconds : 0, "keys/s");
  if (cpu_before && cpu_after && full.keys > 0) {
    // Includes the concurrent writer's updates (1000/s by default).
    report.set("server_cpu_us_per_key", (*cpu_after - *cpu_before) * 1e6 / static_cast<double>(full.keys), "us");
  }
  report.set("subtree_keys", static_cast<double>(sub.keys));
  report.set("subtree_seconds", sub.seconds, "s");
  report.set("subtree_per_s", sub.seconds > 0 ? static_cast<double>(sub.keys) / sub.seconds : 0, "keys/s");
  Latencies during = background.latencies.window(full.start_ns, full.end_ns);
  report.set("writer_samples", static_cast<double>(during.size()));
  report_latency(report, "writer_", during);
  if (o.vs_relay) {
    log << "the same snapshot from ZeroMQ alone...\n";
    stop_before_limit(server);
    SnapshotSource source(o.server_cpu, full.keys, o.value_bytes);
    SnapshotTiming limit = time_snapshot(context, source.endpoint(), "");
    set_ratio(report, "relay", limit.seconds > 0 ? static_cast<double>(limit.keys) / limit.seconds : 0, "keys/s");
  }
  return report;
}

}  // namespace zstore::bench
