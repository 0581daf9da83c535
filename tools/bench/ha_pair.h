// The zstored(s) of a benchmark that fails over or resyncs: one server, or
// an HA pair (primary and backup on free loopback ports, a 200 ms
// heartbeat) whose `active` serves. Used by the storm and resync modes.
#pragma once

#include <chrono>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tools/bench/options.h"
#include "tools/bench/server_process.h"

namespace zstore::bench {

// The pair's heartbeat: its peer is dead after two, so a takeover waits
// ~0.4 s instead of the default 2 s (the same in both runs).
inline constexpr int kHaHeartbeatMs = 200;

struct Members {
  std::vector<std::unique_ptr<ServerProcess>> servers;
  int active = 0;
  bool ha = false;
  ServerProcess& at(int i) { return *servers[static_cast<std::size_t>(i)]; }
  std::string endpoint(int i, int offset = 0) { return at(i).ports().endpoint(at(i).ports().chp + offset); }
  std::vector<std::string> all(int offset) {
    std::vector<std::string> out;
    for (int i = 0; i < static_cast<int>(servers.size()); ++i) out.push_back(endpoint(i, offset));
    return out;
  }
};

// Occurrences of `what` in text.
int count_of(const std::string& text, const std::string& what);

// Waits until `server` logged its `times`-th completed sync as a passive;
// throws std::runtime_error (with its log) after timeout.
void wait_synced(ServerProcess& server, int times, std::chrono::seconds timeout);

// Starts one zstored, or with o.ha a pair, and waits until it serves (and
// the backup synced once).
Members start_members(const Options& o, std::ostream& log);

}  // namespace zstore::bench
