#include "tools/bench/modes.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <vector>

#include "protocol/endpoint.h"
#include "tools/bench/bench_curve.h"
#include "tools/bench/conditional.h"
#include "tools/bench/cpu_busy.h"
#include "tools/bench/floor_relay.h"
#include "tools/bench/load.h"
#include "tools/bench/modes_common.h"
#include "tools/bench/probes.h"
#include "tools/bench/read_modes.h"
#include "tools/bench/relay.h"
#include "tools/bench/restart.h"
#include "tools/bench/resync.h"
#include "tools/bench/chain.h"
#include "tools/bench/conditional.h"
#include "tools/bench/server_process.h"
#include "tools/bench/storm.h"
#include "tools/bench/store_mode.h"
#include "tools/bench/system.h"
#include "tools/bench/transports.h"

namespace zstore::bench {

LoadSpec spec_of(const Options& o, Shape shape) {
  LoadSpec spec;
  spec.shape = shape;
  spec.writers = o.writers;
  spec.value_bytes = o.value_bytes;
  spec.rate = o.rate;
  spec.window = o.window;
  spec.key_space = o.key_space;
  spec.random_keys = o.key_order == "random";
  spec.warmup_s = o.warmup_s;
  spec.duration_s = o.duration_s;
  return spec;
}

LoadResult relay_run(const Options& o, const LoadSpec& spec) {
  // The load's context is declared after the relay so that it ends first,
  // and run_load() lets every message arrive before it returns: libzmq 4.3
  // aborts a process whose peer closes a connection while one of its
  // sessions is part-way through a multipart message ("Resource
  // temporarily unavailable (src/session_base.cpp:260)").
  Relay relay(o.server_cpu);
  zmq::context_t context(1);
  PubSubTransport transport(context, relay.input(), relay.output());
  return run_load(spec, transport);
}

void report_latency(Report& report, const std::string& prefix, const Latencies& latencies) {
  report.set(prefix + "p50_ms", latencies.quantile_ms(0.50), "ms");
  report.set(prefix + "p99_ms", latencies.quantile_ms(0.99), "ms");
  report.set(prefix + "p999_ms", latencies.quantile_ms(0.999), "ms");
}

namespace {

void report_run(Report& report, const std::string& prefix, const LoadResult& result) {
  report.set(prefix + "per_s", result.rate(), "msg/s");
  // All phases: received == sent shows the subscriber skipped nothing.
  report.set(prefix + "sent", static_cast<double>(result.sent));
  report.set(prefix + "received", static_cast<double>(result.completed));
  report_latency(report, prefix, result.latencies.window(result.window_start_ns, result.window_end_ns));
}

// A limit zstored is compared with in the same run: the relay (relay.h),
// or with --vs-floor the floor relay (floor_relay.h). Its fields carry
// its name: relay_per_s, ratio_vs_relay, relay_paced_p99_ms,
// paced_p99_vs_relay; floor_per_s, ratio_vs_floor, ...
enum class LimitKind { kRelay, kFloor };

std::string name_of(LimitKind kind) { return kind == LimitKind::kRelay ? "relay" : "floor"; }

LoadResult floor_run(const Options& o, const LoadSpec& spec) {
  static std::atomic<int> runs{0};
  auto dir = std::filesystem::temp_directory_path() /
             ("zstore-bench-floor-" + std::to_string(getpid()) + "-" + std::to_string(runs++));
  FloorRelay floor(o.server_cpu, dir, spec.shape);  // as relay_run: it outlives the load's context
  zmq::context_t context(1);
  PubSubTransport transport(context, floor.input(), floor.output());
  return run_load(spec, transport);
}

}  // namespace

// name + "_per_s" and "ratio_vs_" + name: per_s against the limit.
void set_ratio(Report& report, const std::string& name, double limit_per_s, const std::string& unit) {
  report.set(name + "_per_s", limit_per_s, unit);
  double measured = report.number("per_s");
  report.set("ratio_vs_" + name, limit_per_s > 0 ? measured / limit_per_s : 0);
}

namespace {

// prefix + "p99_vs_" + name: a run's p99 over the limit's at the same rate.
void set_p99_ratio(Report& report, const std::string& prefix, const std::string& name,
                   const std::string& limit_prefix) {
  double limit_p99 = report.number(limit_prefix + "p99_ms");
  report.set(prefix + "p99_vs_" + name, limit_p99 > 0 ? report.number(prefix + "p99_ms") / limit_p99 : 0);
}

// A run of the limit at spec's load, and prefix + "cpu_us_per_msg": the CPU
// its core spent per message (how busy --server-cpu was over the window,
// from /proc/stat, times the wall time per message), the limit's
// counterpart of zstored's server_cpu_us_per_msg. Not reported without
// --server-cpu or for a window too short to read.
LoadResult measured_limit_run(Report& report, const std::string& prefix, const Options& o, const LoadSpec& spec,
                              LimitKind kind) {
  CpuBusySampler sampler(o.server_cpu);
  LoadResult limit = kind == LimitKind::kRelay ? relay_run(o, spec) : floor_run(o, spec);
  auto busy = sampler.busy(limit.window_start_ns, limit.window_end_ns);
  if (busy && limit.rate() > 0) report.set(prefix + "cpu_us_per_msg", *busy * 1e6 / limit.rate(), "us");
  return limit;
}

// The limit with the same load: its rate is the limit of a saturating run.
// A --rate run is paced, so the limit's latency at that rate is reported
// beside it (relay_p99_ms, p99_vs_relay); a paced run after a saturating
// one gets the limit at its pace too (relay_paced_*, paced_p99_vs_relay).
// The relay's is the latency floor of the machine beside ours, the floor
// relay's that of any server persisting before it publishes; their CPU per
// message (relay_cpu_us_per_msg, relay_paced_cpu_us_per_msg) is the CPU
// floor beside server_cpu_us_per_msg.
void add_limit(Report& report, const Options& o, const LoadSpec& spec, LimitKind kind, std::ostream& log) {
  const std::string name = name_of(kind);
  log << (kind == LimitKind::kRelay ? "relay" : "floor relay") << " with the same load...\n";
  LoadResult limit = measured_limit_run(report, name + "_", o, spec, kind);
  set_ratio(report, name, limit.rate(), "msg/s");
  if (spec.rate > 0) {
    report_latency(report, name + "_", limit.latencies.window(limit.window_start_ns, limit.window_end_ns));
    set_p99_ratio(report, "", name, name + "_");
  }
  if (o.rate_fraction > 0) {
    LoadSpec paced = spec;
    paced.rate = report.number("paced_target_per_s");
    log << name << " at " << paced.rate << " messages/s...\n";
    report_run(report, name + "_paced_", measured_limit_run(report, name + "_paced_", o, paced, kind));
    set_p99_ratio(report, "paced_", name, name + "_paced_");
  }
}

std::pair<std::string, std::uint16_t> split_host_port(const std::string& value, const std::string& flag) {
  auto parsed = protocol::parse_host_port(value);
  if (!parsed) throw std::invalid_argument(flag + " must be host:port, got " + value);
  return {std::move(parsed->host), parsed->port};
}

// zstored's --dafka-max-message-bytes for records of --value-bytes: its
// default (1 MiB), or the value size and room for the record's header.
std::size_t dafka_frame_limit(const Options& o) {
  return std::max<std::size_t>(std::size_t{1} << 20, o.value_bytes + (std::size_t{64} << 10));
}

}  // namespace

Server open_server(const Options& o, std::ostream& log, const BenchCurve* curve) {
  Server server;
  bool dafka = o.mode == "dafka" || o.mode == "replay";
  if (dafka ? !o.dafka_server.empty() : !o.server.empty()) {
    if (dafka) {
      auto [host, port] = split_host_port(o.dafka_server, "--dafka-server");
      server.ports.host = host;
      server.ports.dafka = port;
      server.ports.tower = split_host_port(o.tower, "--tower").second;
    } else {
      auto [host, port] = split_host_port(o.server, "--server");
      server.ports.host = host;
      server.ports.chp = port;
    }
    server.external_pid = o.server_pid;
    return server;
  }
  auto path = o.zstored.empty() ? default_zstored_path() : std::filesystem::path(o.zstored);
  std::vector<std::string> args = curve ? curve->server_args() : std::vector<std::string>{};
  args.insert(args.end(), o.zstored_args.begin(), o.zstored_args.end());
  // Records (and FETCH answers) of --value-bytes within zstored's Dafka
  // frame limit (default 1 MiB).
  if (dafka) args.insert(args.end(), {"--dafka-max-message-bytes", std::to_string(dafka_frame_limit(o))});
  server.process = std::make_unique<ServerProcess>(path, o.server_cpu, args);
  if (curve) server.process->set_client_security(curve->client());
  server.process->start();
  server.ports = server.process->ports();
  log << "zstored " << server.pid() << " on " << server.process->data_dir().string() << '\n';
  return server;
}

void report_memory(Report& report, pid_t pid) {
  if (pid <= 0) return;
  if (auto use = memory_use(pid)) {
    report.set("server_rss_mib", static_cast<double>(use->rss_kib) / 1024.0, "MiB");
    report.set("server_hwm_mib", static_cast<double>(use->hwm_kib) / 1024.0, "MiB");
  }
}

namespace {

// run_load() plus the server's CPU time per message (robust to other load on
// the machine, unlike the rate).
LoadResult measured_run(Report& report, const std::string& prefix, const LoadSpec& spec, Transport& transport,
                        pid_t pid) {
  auto before = pid > 0 ? cpu_seconds(pid) : std::nullopt;
  LoadResult result = run_load(spec, transport);
  auto after = pid > 0 ? cpu_seconds(pid) : std::nullopt;
  report_run(report, prefix, result);
  if (before && after && result.completed > 0) {
    report.set(prefix + "server_cpu_us_per_msg", (*after - *before) * 1e6 / static_cast<double>(result.completed),
               "us");
  }
  return result;
}

Report relay_mode(const Options& o, std::ostream&) {
  Report report("relay");
  report.set_text("shape", o.shape);
  LoadSpec spec = spec_of(o, o.shape == "dafka" ? Shape::kDafka : Shape::kChp);
  report_run(report, "", relay_run(o, spec));
  return report;
}

// The steps shared by chp and dafka: a saturating run, the optional paced
// run at a fraction of its rate, zstored's memory, the optional relay run.
void streaming_runs(Report& report, const Options& o, const LoadSpec& spec, Transport& transport, const Server& server,
                    std::ostream& log) {
  report.set("value_bytes", static_cast<double>(o.value_bytes), "B");
  report.set("writers", o.writers);
  measured_run(report, "", spec, transport, server.pid());
  if (o.rate_fraction > 0) {
    LoadSpec paced = spec;
    paced.rate = report.number("per_s") * o.rate_fraction;
    log << "paced run at " << paced.rate << " messages/s...\n";
    report.set("paced_target_per_s", paced.rate, "msg/s");
    measured_run(report, "paced_", paced, transport, server.pid());
  }
  report_memory(report, server.pid());
  if (o.vs_relay) add_limit(report, o, spec, LimitKind::kRelay, log);
  if (o.vs_floor) add_limit(report, o, spec, LimitKind::kFloor, log);
}

// --curve: a plaintext client must get nothing from the server, or the
// numbers would not be those of CURVE.
void check_plain_refused(const Server& server, std::ostream& log) {
  ServerPorts plain = server.ports;
  plain.security = {};
  if (wait_chp_ready(plain, std::chrono::milliseconds(500))) {
    throw std::runtime_error("zstored answered a plaintext client: CURVE is not on");
  }
  log << "CURVE on: zstored refuses plaintext clients; ours use a key of its allow list\n";
}

// --conditional: the same load as confirmed, conditional writes
// (conditional.h), beside the plain run on the same server.
void conditional_run(Report& report, const Options& o, const Server& server, zmq::context_t& context,
                     std::ostream& log) {
  log << "conditional writes (WRITE? with if-seq / if-absent)...\n";
  LoadSpec spec = spec_of(o, Shape::kChp);
  spec.chp_uuids = true;
  ConditionalTransport transport(context, server.ports.endpoint(server.ports.chp),
                                 server.ports.endpoint(server.ports.chp + 1), server.ports.security);
  measured_run(report, "conditional_", spec, transport, server.pid());
  report.set("conditional_vs_plain", report.number("conditional_per_s") / report.number("per_s"));
  report.set("conditional_refused", static_cast<double>(transport.refused()));
  report.set("conditional_failed", static_cast<double>(transport.failed()));
  report.set("conditional_resent", static_cast<double>(transport.resent()));
  report.set("conditional_waited", static_cast<double>(transport.waited()));
}

Report chp_mode(const Options& o, std::ostream& log) {
  Report report("chp");
  std::unique_ptr<BenchCurve> curve = o.curve ? std::make_unique<BenchCurve>() : nullptr;
  Server server = open_server(o, log, curve.get());
  if (curve) check_plain_refused(server, log);
  report.set_flag("curve", o.curve);
  zmq::context_t context(1);
  PubSubTransport transport(context, server.ports.endpoint(server.ports.chp + 2),
                            server.ports.endpoint(server.ports.chp + 1), server.ports.security);
  report.set_text("key_order", o.key_order);
  report.set("key_space", static_cast<double>(o.key_space));
  streaming_runs(report, o, spec_of(o, Shape::kChp), transport, server, log);
  if (o.conditional) conditional_run(report, o, server, context, log);
  return report;
}

Report dafka_mode(const Options& o, std::ostream& log) {
  Report report("dafka");
  std::unique_ptr<BenchCurve> curve = o.curve ? std::make_unique<BenchCurve>() : nullptr;
  Server server = open_server(o, log, curve.get());
  if (curve) check_plain_refused(server, log);
  report.set_flag("curve", o.curve);
  zmq::context_t context(1);
  DafkaTransport transport(context, server.ports.endpoint(server.ports.tower),
                           server.ports.endpoint(server.ports.dafka), server.ports.security);
  streaming_runs(report, o, spec_of(o, Shape::kDafka), transport, server, log);
  return report;
}

}  // namespace

Report run_mode(const Options& o, std::ostream& log) {
  pin_current_thread(o.client_cpu);
  if (o.mode == "relay") return relay_mode(o, log);
  if (o.mode == "chp") return chp_mode(o, log);
  if (o.mode == "dafka") return dafka_mode(o, log);
  if (o.mode == "replay") return replay_mode(o, log);
  if (o.mode == "restart") return restart_mode(o, log);
  if (o.mode == "store") return store_mode(o, log);
  if (o.mode == "storm") return storm_mode(o, log);
  if (o.mode == "resync") return resync_mode(o, log);
  if (o.mode == "chain") return chain_mode(o, log);
  return snapshot_mode(o, log);
}

}  // namespace zstore::bench
