#include "tools/bench/restart.h"

#include <filesystem>
#include <stdexcept>

#include <zmq.hpp>

#include "tools/bench/load.h"
#include "tools/bench/server_process.h"
#include "tools/bench/system.h"
#include "tools/bench/transports.h"

namespace zstore::bench {

namespace {

namespace fs = std::filesystem;

// Bytes of the files in dir whose name ends with suffix (all when empty).
double bytes_of(const fs::path& dir, const std::string& suffix) {
  std::uintmax_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!suffix.empty() && !name.ends_with(suffix)) continue;
    std::error_code size_ec;
    auto size = it->file_size(size_ec);
    if (!size_ec) total += size;
  }
  return static_cast<double>(total);
}

void load_keys(const Options& o, const ServerPorts& ports, Report& report, std::ostream& log) {
  zmq::context_t context(1);
  PubSubTransport transport(context, ports.endpoint(ports.chp + 2), ports.endpoint(ports.chp + 1));
  LoadSpec load;
  load.shape = Shape::kChp;
  load.writers = o.writers;
  load.value_bytes = o.value_bytes;
  load.window = o.window;
  load.total = o.keys;
  load.key_space = 0;
  log << "loading " << o.keys << " keys...\n";
  LoadResult loaded = run_load(load, transport);
  report.set("load_per_s", loaded.rate(), "msg/s");
}

// Kills the server, starts it again and reports the restart time; prefix
// names the round.
void timed_restart(ServerProcess& server, Report& report, const std::string& prefix, std::ostream& log) {
  fs::path dir = server.data_dir();
  report.set(prefix + "wal_bytes_before", bytes_of(dir, ".log"), "B");
  report.set(prefix + "data_dir_bytes", bytes_of(dir, ""), "B");
  server.kill_hard();
  server.launch();
  double seconds = time_first_kthxbai(server.ports(), std::chrono::seconds(120), [&] { return server.running(); });
  if (seconds < 0) throw std::runtime_error("zstored did not answer within 120 s of its restart");
  log << prefix << "restart: first KTHXBAI after " << seconds << " s\n";
  report.set(prefix + "restart_seconds", seconds, "s");
  report.set(prefix + "wal_bytes_after", bytes_of(dir, ".log"), "B");
}

}  // namespace

Report restart_mode(const Options& o, std::ostream& log) {
  Report report("restart");
  auto path = o.zstored.empty() ? default_zstored_path() : fs::path(o.zstored);
  ServerProcess server(path, o.server_cpu, o.zstored_args);
  server.start();
  log << "zstored " << server.pid() << " on " << server.data_dir().string() << '\n';
  report.set("keys", static_cast<double>(o.keys));
  report.set("value_bytes", static_cast<double>(o.value_bytes), "B");
  load_keys(o, server.ports(), report, log);
  timed_restart(server, report, "", log);
  // Killed again right away: what the first restart left to replay.
  timed_restart(server, report, "second_", log);
  if (auto use = memory_use(server.pid()))
    report.set("server_rss_mib", static_cast<double>(use->rss_kib) / 1024.0, "MiB");
  return report;
}

}  // namespace zstore::bench
