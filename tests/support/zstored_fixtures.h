// Test fixtures of real zstored processes, shared by the server and client
// tests: one started zstored with scripted CHP peers, and a started Binary
// Star pair. A fixture that cannot start its servers fails the calling test
// (a Boost.Test REQUIRE); each owns its processes and stops them on destruction.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "tools/harness/chp_peer.h"
#include "tools/harness/zstored.h"

namespace zstore::testing {

// One zstored with `extra` flags, started; peer() connects a ChpPeer to it.
struct ZstoredServer {
  zmq::context_t ctx;
  Zstored zstored;

  explicit ZstoredServer(std::vector<std::string> extra = {});
  // A ChpPeer whose PUB->SUB paths both carry messages (wait_connected).
  std::unique_ptr<ChpPeer> peer();
};

// Asks server for a whole snapshot, each time on a new connection (each
// request is a vote to a passive), until one answers or scaled(timeout) passes.
std::optional<ChpSnapshot> snapshot_from(zmq::context_t& ctx, const Zstored& server, std::chrono::milliseconds timeout);

// A Binary Star pair (make_ha_pair) with 200 ms HA heartbeats and HUGZ and
// the `common` flags on both, both started.
struct HaPair {
  zmq::context_t ctx;
  Zstored primary;
  Zstored backup;

  explicit HaPair(const std::vector<std::string>& common = {});
  std::optional<ChpSnapshot> snapshot_from(const Zstored& server, std::chrono::milliseconds timeout) {
    return testing::snapshot_from(ctx, server, timeout);
  }
  // Waits until the primary answers a snapshot (it is active) and the backup
  // has logged its sync from it.
  void wait_active_and_synced();
};

}  // namespace zstore::testing
