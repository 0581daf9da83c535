#include "server/http/http_health.h"

#include <nlohmann/json.hpp>

namespace zstore::server {
namespace {

// Adds loop `name` to *loops; false when it is not running or is stale.
// Its ports that are unbound (bound_endpoint.h) are added to *unbound.
template <typename Metrics>
bool check_loop(nlohmann::json* loops, const char* name, const Metrics& m, std::chrono::milliseconds stale_after,
                std::int64_t* unbound) {
  std::int64_t beat = m.loop_heartbeat_ms.load(std::memory_order_relaxed);
  if (beat == 0) {
    (*loops)[name] = {{"state", "stopped"}};
    return false;
  }
  std::int64_t age = loop_clock_ms() - beat;
  bool fresh = age <= stale_after.count();
  (*loops)[name] = {{"state", fresh ? "running" : "stuck"}, {"last_turn_ms_ago", age}};
  std::int64_t ports = m.ports_unbound.load(std::memory_order_relaxed);
  if (ports > 0) (*loops)[name]["ports_unbound"] = ports;
  *unbound += ports;
  return fresh;
}

// Writes that fail for good make it unhealthy (zstored then exits to be
// restarted, storage_watch.h); failing ones it is retrying degrade it, and
// so do writes refused (the disk watermark) or waiting: on the memtable
// budget, for a flush to free it, or on RocksDB's write controller. A loop
// blocked in such a write past stale_after shows as stuck besides.
struct StorageState {
  std::string text = "ok";
  bool unhealthy = false;
  bool degraded = false;
};

StorageState check_storage(storage::Database* db) {
  StorageState s;
  if (db == nullptr || db->db() == nullptr) return s;
  s.degraded = true;
  if (db->write_unrecoverable()) {
    s.unhealthy = true;
    s.text = "stopped: " + db->last_write_error();
  } else if (db->write_failing()) {
    s.text = "writes failing: " + db->last_write_error();
  } else if (db->writes_refused()) {
    s.text = "writes refused";
  } else if (storage::MemoryUse m = db->memory_use(); m.writes_stalled) {
    s.text = "writes waiting: memtable budget full";
  } else if (m.writes_stopped) {
    s.text = "writes waiting: RocksDB stopped writes";
  } else {
    s.degraded = false;
  }
  return s;
}

}  // namespace

Health check_health(const ServerView& view, std::chrono::milliseconds stale_after) {
  nlohmann::json loops = nlohmann::json::object();
  bool healthy = view.db != nullptr && view.db->db() != nullptr;
  std::int64_t unbound = 0;
  if (view.chp) healthy = check_loop(&loops, "chp", *view.chp, stale_after, &unbound) && healthy;
  if (view.dafka) healthy = check_loop(&loops, "dafka", *view.dafka, stale_after, &unbound) && healthy;
  if (view.tower) healthy = check_loop(&loops, "tower", *view.tower, stale_after, &unbound) && healthy;
  auto uptime = std::chrono::duration<double>(std::chrono::steady_clock::now() - view.started).count();
  // Low disk degrades but does not fail the check: reads go on, and a
  // restart would not free any space. So does a port being bound again
  // (a few ms after a revocation; longer only if another process took it):
  // the loop goes on serving its other ports and retries.
  bool disk_low = view.disk != nullptr && view.disk->low();
  StorageState storage = check_storage(view.db);
  healthy = healthy && !storage.unhealthy;
  // A read replica past --replica-stale-ms without its upstream serves an
  // old map: degraded, and said so (docs/replicas.md).
  std::int64_t silent = view.chp ? view.chp->replica_upstream_silent_ms.load(std::memory_order_relaxed) : -1;
  bool stale = silent >= 0 && silent > view.chp->replica_stale_after_ms.load(std::memory_order_relaxed);
  bool degraded = disk_low || unbound > 0 || storage.degraded || stale;
  nlohmann::json body = {{"status", !healthy   ? "unhealthy"
                                    : degraded ? "degraded"
                                               : "ok"},
                         {"role", view.ha_state ? view.ha_state() : "standalone"},
                         {"database", view.db != nullptr && view.db->db() != nullptr ? "open" : "closed"},
                         {"storage", storage.text},
                         {"uptime_seconds", static_cast<std::int64_t>(uptime)},
                         {"loops", loops}};
  if (silent >= 0) body["replica"] = {{"upstream", stale ? "stale" : "ok"}, {"upstream_silent_ms", silent}};
  if (view.disk) {
    body["disk"] = {{"state", disk_low ? "low: writes refused" : "ok"},
                    {"free_bytes", view.disk->free_bytes()},
                    {"min_free_bytes", view.disk->min_free_bytes()}};
  }
  return {healthy, body.dump() + "\n"};
}

}  // namespace zstore::server
