#include "tools/bench/chain.h"

#include <memory>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "tools/bench/latency.h"
#include "tools/bench/load.h"
#include "tools/bench/server_process.h"
#include "tools/bench/transports.h"

namespace zstore::bench {

Report chain_mode(const Options& o, std::ostream& log) {
  Report report("chain");
  const int replicas = o.replicas > 0 ? o.replicas : 2;
  report.set("replicas", replicas);
  report.set("writer_rate", o.writer_rate, "msg/s");
  auto path = o.zstored.empty() ? default_zstored_path() : std::filesystem::path(o.zstored);
  // Every server on --server-cpu, as the other modes pin theirs: the hops
  // share one core, so a hop's latency includes waiting for the others.
  std::vector<std::unique_ptr<ServerProcess>> servers;
  servers.push_back(std::make_unique<ServerProcess>(path, o.server_cpu, o.zstored_args));
  servers.back()->start();
  for (int i = 1; i <= replicas; ++i) {
    const ServerPorts& up = servers.back()->ports();
    std::vector<std::string> args = o.zstored_args;
    args.insert(args.end(), {"--replica-of", up.endpoint(up.chp)});
    servers.push_back(std::make_unique<ServerProcess>(path, o.server_cpu, args));
    servers.back()->start();  // answers once it holds the map
  }
  log << "chain of " << servers.size() << " zstored: a standalone and " << replicas << " replica(s)\n";
  const ServerPorts& top = servers.front()->ports();
  zmq::context_t context(1);
  for (std::size_t hop = 0; hop < servers.size(); ++hop) {
    const ServerPorts& at = servers[hop]->ports();
    PubSubTransport transport(context, top.endpoint(static_cast<std::uint16_t>(top.chp + 2)),
                              at.endpoint(static_cast<std::uint16_t>(at.chp + 1)));
    LoadSpec spec = background_writer_spec(o.value_bytes, o.writer_rate);
    spec.warmup_s = o.warmup_s;
    spec.duration_s = o.duration_s;
    log << "hop " << hop << ": " << o.duration_s << " s at " << o.writer_rate << " updates/s...\n";
    LoadResult r = run_load(spec, transport);
    Latencies in = r.latencies.window(r.window_start_ns, r.window_end_ns);
    std::string name = "hop" + std::to_string(hop);
    report.set(name + "_samples", static_cast<double>(in.size()));
    report.set(name + "_p50_ms", in.quantile_ms(0.50), "ms");
    report.set(name + "_p99_ms", in.quantile_ms(0.99), "ms");
    report.set(name + "_max_ms", in.quantile_ms(1.0), "ms");
  }
  return report;
}

}  // namespace zstore::bench
