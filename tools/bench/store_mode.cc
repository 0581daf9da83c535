#include "tools/bench/store_mode.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <vector>

#include "storage/chp_store.h"
#include "storage/database.h"
#include "tools/bench/load.h"
#include "tools/bench/modes_common.h"
#include "tools/bench/system.h"

namespace zstore::bench {
namespace {

// CLOCK_THREAD_CPUTIME_ID (the applying thread) or CLOCK_PROCESS_CPUTIME_ID
// (every thread: RocksDB's flush and compaction too; the bench runs no other
// thread meanwhile), to the nanosecond.
double cpu_seconds_of(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void require(const storage::Status& s, const char* what) {
  if (!s.ok()) throw std::runtime_error(std::string(what) + ": " + s.message());
}

struct StoreRun {
  double seconds = 0;
  double thread_cpu = 0;   // the applying thread: what a reactor pays
  double process_cpu = 0;  // with RocksDB's flush and compaction threads meanwhile
  std::uint64_t prior_reads = 0;
};

// Fills batch with writes [first, first + batch.size()) of the load, n-th
// write going to writer n % writers as in the chp mode.
void fill(std::vector<storage::ChpWrite>& batch, const LoadSpec& spec, std::uint64_t first) {
  for (std::size_t i = 0; i < batch.size(); ++i) {
    std::uint64_t n = first + i;
    int writer = static_cast<int>(n % static_cast<std::uint64_t>(spec.writers));
    batch[i].key = make_key(spec, writer, n / static_cast<std::uint64_t>(spec.writers));
    batch[i].value.assign(spec.value_bytes, static_cast<char>('a' + n % 26));
    batch[i].sequence = 0;
  }
}

StoreRun apply_all(const Options& o, const LoadSpec& spec, const std::filesystem::path& dir) {
  std::unique_ptr<storage::Database> db;
  require(storage::Database::Open(dir.string(), {}, &db), "open database");
  std::unique_ptr<storage::ChpStore> store;
  require(storage::ChpStore::Open(db.get(), &store), "open CHP store");
  std::vector<storage::ChpWrite> batch;
  StoreRun run;
  auto start = std::chrono::steady_clock::now();
  double thread0 = cpu_seconds_of(CLOCK_THREAD_CPUTIME_ID);
  double process0 = cpu_seconds_of(CLOCK_PROCESS_CPUTIME_ID);
  for (std::uint64_t first = 0; first < o.keys; first += batch.size()) {
    batch.resize(static_cast<std::size_t>(std::min<std::uint64_t>(o.batch, o.keys - first)));
    fill(batch, spec, first);
    require(store->apply(batch), "apply");
  }
  run.thread_cpu = cpu_seconds_of(CLOCK_THREAD_CPUTIME_ID) - thread0;
  run.process_cpu = cpu_seconds_of(CLOCK_PROCESS_CPUTIME_ID) - process0;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.prior_reads = store->prior_reads();
  store.reset();
  require(db->close(), "close database");
  return run;
}

}  // namespace

Report store_mode(const Options& o, std::ostream& log) {
  Report report("store");
  LoadSpec spec = spec_of(o, Shape::kChp);
  auto dir = std::filesystem::temp_directory_path() / ("zstore-bench-store-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  log << "applying " << o.keys << " writes in batches of " << o.batch << "...\n";
  pin_current_thread(o.server_cpu);
  StoreRun run;
  try {
    run = apply_all(o, spec, dir);
  } catch (...) {
    std::filesystem::remove_all(dir);
    throw;
  }
  std::filesystem::remove_all(dir);
  pin_current_thread(o.client_cpu);
  double writes = static_cast<double>(o.keys);
  report.set_text("key_order", o.key_order);
  report.set("key_space", static_cast<double>(o.key_space));
  report.set("writes", writes);
  report.set("batch", static_cast<double>(o.batch));
  report.set("per_s", run.seconds > 0 ? writes / run.seconds : 0, "writes/s");
  report.set("store_thread_us_per_write", run.thread_cpu * 1e6 / writes, "us");
  report.set("store_cpu_us_per_write", run.process_cpu * 1e6 / writes, "us");
  report.set("prior_reads", static_cast<double>(run.prior_reads));
  if (o.vs_relay) {
    log << "the relay...\n";
    double relay = relay_run(o, spec).rate();
    report.set("relay_per_s", relay, "msg/s");
    double relay_us = relay > 0 ? 1e6 / relay : 0;
    report.set("relay_us_per_msg", relay_us, "us");
    double store_us = run.process_cpu * 1e6 / writes;
    report.set("ratio_bound", relay_us > 0 ? relay_us / (relay_us + store_us) : 0);
  }
  return report;
}

}  // namespace zstore::bench
