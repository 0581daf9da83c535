#include "server/http_health.h"

#include <nlohmann/json.hpp>

namespace zstore::server {
namespace {

// Adds loop `name` to *loops; false when it is not running or is stale.
bool check_loop(nlohmann::json* loops, const char* name, const std::atomic<std::int64_t>& heartbeat,
                std::chrono::milliseconds stale_after) {
  std::int64_t beat = heartbeat.load(std::memory_order_relaxed);
  if (beat == 0) {
    (*loops)[name] = {{"state", "stopped"}};
    return false;
  }
  std::int64_t age = loop_clock_ms() - beat;
  bool fresh = age <= stale_after.count();
  (*loops)[name] = {{"state", fresh ? "running" : "stuck"}, {"last_turn_ms_ago", age}};
  return fresh;
}

}  // namespace

Health check_health(const ServerView& view, std::chrono::milliseconds stale_after) {
  nlohmann::json loops = nlohmann::json::object();
  bool healthy = view.db != nullptr && view.db->db() != nullptr;
  if (view.chp) healthy = check_loop(&loops, "chp", view.chp->loop_heartbeat_ms, stale_after) && healthy;
  if (view.dafka) healthy = check_loop(&loops, "dafka", view.dafka->loop_heartbeat_ms, stale_after) && healthy;
  if (view.tower) healthy = check_loop(&loops, "tower", view.tower->loop_heartbeat_ms, stale_after) && healthy;
  auto uptime = std::chrono::duration<double>(std::chrono::steady_clock::now() - view.started).count();
  // Low disk degrades but does not fail the check: reads go on, and a
  // restart would not free any space.
  bool disk_low = view.disk != nullptr && view.disk->low();
  nlohmann::json body = {{"status", !healthy ? "unhealthy" : disk_low ? "degraded" : "ok"},
                         {"role", view.ha_state ? view.ha_state() : "standalone"},
                         {"database", view.db != nullptr && view.db->db() != nullptr ? "open" : "closed"},
                         {"uptime_seconds", static_cast<std::int64_t>(uptime)},
                         {"loops", loops}};
  if (view.disk) {
    body["disk"] = {{"state", disk_low ? "low: writes refused" : "ok"},
                    {"free_bytes", view.disk->free_bytes()},
                    {"min_free_bytes", view.disk->min_free_bytes()}};
  }
  return {healthy, body.dump() + "\n"};
}

}  // namespace zstore::server
