// Health of a running zstored, as served on GET /healthz: healthy when the
// database is open and every enabled reactor loop stamped its heartbeat
// within stale_after (a loop that stopped or is stuck makes it unhealthy).
// The body is one JSON object: status ("ok", "degraded" or "unhealthy"),
// storage ("ok", "writes refused", "writes failing: ...", "stopped: ...": a
// write failed for good, which makes it unhealthy), role (HA state
// or "standalone"; "replica" for a read replica, which adds replica:
// {upstream: "ok" or "stale", upstream_silent_ms} and is degraded when
// stale), uptime_seconds, and per loop its state and the age of
// its last turn.
#pragma once

#include <chrono>
#include <string>

#include "server/http/server_view.h"

namespace zstore::server {

struct Health {
  bool healthy = false;
  std::string body;  // JSON
};

Health check_health(const ServerView& view, std::chrono::milliseconds stale_after);

}  // namespace zstore::server
