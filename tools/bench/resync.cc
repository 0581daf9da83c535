#include "tools/bench/resync.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "tools/bench/ha_pair.h"
#include "tools/bench/latency.h"
#include "tools/bench/load.h"
#include "tools/bench/scrape.h"
#include "tools/bench/transports.h"
#include "tools/harness/harness.h"

namespace zstore::bench {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Polls a server's /healthz every 5 ms from its own thread and keeps the
// largest age of the CHP loop's last turn seen between start() and stop():
// the longest turn, to within the polling period. Unreachable or starting
// servers (no CHP loop yet) are skipped.
class TurnWatch {
 public:
  TurnWatch(std::string host, std::uint16_t port) : host_(std::move(host)), port_(port) {
    thread_ = std::thread([this] { run(); });
  }
  ~TurnWatch() {
    stop_ = true;
    thread_.join();
  }
  double worst_ms() const { return worst_.load(); }
  std::uint64_t samples() const { return samples_.load(); }

 private:
  void run() {
    while (!stop_) {
      try {
        double age = chp_turn_age_ms(http_get(host_, port_, "/healthz"));
        if (age >= 0) {
          worst_ = std::max(worst_.load(), age);
          ++samples_;
        }
      } catch (const std::exception&) {
        // killed or restarting: nothing to see
      }
      std::this_thread::sleep_for(milliseconds(5));
    }
  }
  std::string host_;
  std::uint16_t port_;
  std::atomic<bool> stop_{false};
  std::atomic<double> worst_{0};
  std::atomic<std::uint64_t> samples_{0};
  std::thread thread_;
};

void load_active(Members& m, const Options& o, Report& report, std::ostream& log) {
  zmq::context_t context(1);
  PubSubTransport transport(context, m.endpoint(0, 2), m.endpoint(0, 1));
  LoadSpec load;
  load.writers = o.writers;
  load.value_bytes = o.value_bytes;
  load.window = o.window;
  load.total = o.keys;
  load.key_space = 0;
  load.warmup_s = 0;
  log << "loading " << o.keys << " keys...\n";
  report.set("load_per_s", run_load(load, transport).rate(), "msg/s");
}

// Until the passive's map holds the keys (its /metrics count).
void wait_passive_holds(ServerProcess& passive, double keys) {
  auto full = [&] {
    try {
      return time_metrics_scrape(passive.ports().host, passive.ports().http).chp_keys >= keys;
    } catch (const std::exception&) {
      return false;
    }
  };
  if (!testing::wait_until(full, seconds(300))) throw std::runtime_error("the passive did not catch up in 300 s");
}

}  // namespace

Report resync_mode(const Options& options, std::ostream& log) {
  Report report("resync");
  Options o = options;
  o.ha = true;
  report.set("keys", static_cast<double>(o.keys));
  report.set("writer_rate", o.writer_rate, "msg/s");
  Members m = start_members(o, log);
  load_active(m, o, report, log);
  ServerProcess& passive = m.at(1);
  wait_passive_holds(passive, static_cast<double>(o.keys));

  zmq::context_t context(1);
  PubSubTransport transport(context, m.endpoint(0, 2), m.endpoint(0, 1));
  BackgroundLoad writer(background_writer_spec(o.value_bytes, o.writer_rate), transport);
  std::this_thread::sleep_for(seconds(1));  // the writer's handshake and first updates
  log << "kill -9 the passive " << passive.pid() << " and restart it: a full resync...\n";
  int synced = count_of(passive.log_text(), "HA follower: synced");
  report.set("passive_syncs_before", synced);  // more than 1: it lost updates during the load and resynced
  std::int64_t start = now_ns();
  passive.kill_hard();
  TurnWatch watch(passive.ports().host, passive.ports().http);
  passive.launch();
  wait_synced(passive, synced + 1, seconds(600));
  std::int64_t end = now_ns();
  double worst = watch.worst_ms();
  LoadResult background = writer.stop();
  report.set("resync_seconds", static_cast<double>(end - start) * 1e-9, "s");
  report.set("passive_worst_turn_ms", worst, "ms");
  report.set("passive_turn_samples", static_cast<double>(watch.samples()));
  Latencies during = background.latencies.window(start, end);
  report.set("writer_samples", static_cast<double>(during.size()));
  report.set("writer_p50_ms", during.quantile_ms(0.50), "ms");
  report.set("writer_p99_ms", during.quantile_ms(0.99), "ms");
  report.set("writer_max_ms", during.quantile_ms(1.0), "ms");
  return report;
}

}  // namespace zstore::bench
