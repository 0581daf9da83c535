// ClientStats: counters a CloneClient keeps about its server traffic, for
// tests, logs and tools. A copy taken at one instant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace zstore::client {

struct ClientStats {
  std::uint64_t malformed_dropped = 0;   // undecodable messages from a server, dropped
  std::uint64_t stale_discarded = 0;     // KVPUBs whose sequence was not above the last applied
  std::uint64_t snapshots_applied = 0;   // snapshots loaded into the map (resumes included)
  std::uint64_t resumes = 0;             // of which only the updates after our sequence (resumed=1)
  std::uint64_t gaps = 0;                // updates missed (sequence jump or HUGZ ahead): resumed or resynced
  std::uint64_t snapshot_requests = 0;   // ICANHAZ? sent, retries included
  std::uint64_t failovers = 0;           // switches to the next server after silence
  std::uint64_t resyncs = 0;             // fresh sessions on the same server (see CloneClient)
  std::uint64_t kvsets_dropped = 0;      // KVSETs dropped: a server's queue was full
  std::uint64_t callback_errors = 0;     // exceptions thrown by the change callback
  std::size_t current_server = 0;        // index into Options::servers
  std::uint64_t agent_errors = 0;        // unexpected errors caught in the background thread
  std::uint64_t handshake_failures = 0;  // security handshakes that failed (see CloneClient::handshake_error)
  std::string last_error;                // the last malformed message, agent error or handshake failure
};

}  // namespace zstore::client
