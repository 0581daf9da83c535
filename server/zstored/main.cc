// zstored: the zstore server. Opens the data directory, starts the enabled
// protocol reactors, and runs until SIGINT or SIGTERM, then shuts down
// cleanly (finish the current batch, sync, close the database).
#include <signal.h>

#include <spdlog/spdlog.h>

#include <cstdio>

#include "server/zstored/fd_budget.h"
#include "server/reactor/log.h"
#include "server/zstored/malloc_tuning.h"
#include "server/options/options.h"
#include "server/zstored/zstored_reactors.h"
#include "server/zstored/zstored_signals.h"
#include "server/zstored/zstored_storage.h"

extern char** environ;

namespace zstore::server {
namespace {

int run(const ServerOptions& o) {
  block_handled_signals();  // before any thread starts: main waits for them
  std::uint64_t fd_limit = raise_fd_limit();
  const std::uint64_t http_fds = o.http_port != 0 ? o.http_max_connections : 0;
  ConnectionPlan plan = plan_connections(fd_limit, o.max_connections, http_fds);
  if (!plan.error.empty()) {
    spdlog::critical("cannot start: {}", plan.error);
    return 1;
  }
  spdlog::info(
      "file descriptor limit {}: up to {} connections, {} kept for the database and the process, {} for "
      "HTTP",
      fd_limit, plan.total, kReservedFds, http_fds);
  Storage st;
  if (!st.open(o)) return 1;
  DatabaseJobs jobs;  // declared after st (destroyed first), stopped after the reactors
  jobs.start(o, st);
  Reactors reactors;
  reactors.limits = {static_cast<std::size_t>(o.max_connections_per_port), static_cast<std::size_t>(plan.total)};
  if (!reactors.start(o, st, *jobs.disk)) return 1;
  spdlog::info("zstored started: data dir {}, sync {}, endpoints:{}", o.data_dir, storage::to_string(o.sync),
               reactors.endpoints(o));

  int sig = wait_for_signal(reactors.zap.get(), reactors.acl.get());
  spdlog::info("received {}, shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM");
  bool storage_stopped = jobs.storage->stopped();
  reactors.stop();  // HTTP first: it reads the database and the reactors' state
  jobs.stop();      // the syncer syncs what the reactors wrote last
  if (!st.close() || storage_stopped) return 1;
  spdlog::info("zstored stopped cleanly");
  return 0;
}

}  // namespace
}  // namespace zstore::server

int main(int argc, char** argv) {
  auto outcome = zstore::server::parse_options(argc, argv, environ);
  if (!outcome.options) {
    std::fputs((outcome.message + "\n").c_str(), outcome.exit_code == 0 ? stdout : stderr);
    return outcome.exit_code;
  }
  zstore::server::init_logging(outcome.options->log_level);
  if (!zstore::server::tune_malloc_for_large_values()) spdlog::warn("mallopt(M_MMAP_THRESHOLD) refused");
  return zstore::server::run(*outcome.options);
}
