// Command line of zstore-torture:
//   zstore-torture [--minutes N] [--ha [--ha-fault one|both|staggered|partition]] [--fault kill|power]
//                  [--sync always|batch|none] [--seed S]
//                  [--hostile N [--hostile-kinds K,..] [--hostile-connections M]] [--counters N]
// parse() returns the options, or an error message (usage error, exit 2).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace zstore::torture {

// What each cycle of --ha does to the pair.
enum class HaFault {
  kOne,        // SIGKILL one member, restart it
  kBoth,       // SIGKILL both at once, restart both in a random order
  kStaggered,  // SIGKILL one, the survivor serves a while, SIGKILL it, restart both in a random order
  kPartition,  // cut the HA link while both serve, heal it
};

// What a hostile client does (hostile_clients.h), each selectable.
enum class HostileKind {
  kIdle,       // idle TCP connections held open to the CHP and HTTP ports
  kSlowSub,    // a SUB that subscribes to everything and never reads
  kSnapshot,   // ICANHAZ? for the whole map, the answer never read
  kHa,         // PEERSNAPSHOT?, CATCHUP?, RECONCILE? from a non-peer, never read
  kMalformed,  // malformed frames to the snapshot port and the collector
  kHttp,       // HTTP bodies announced huge, and slowloris heads
};
inline constexpr int kHostileKinds = 6;
const char* hostile_kind_name(HostileKind kind);

struct TortureOptions {
  double minutes = 1.0;  // how long to run (fractions allowed)
  bool ha = false;       // a Binary Star pair instead of one server
  HaFault ha_fault = HaFault::kOne;
  std::uint64_t seed = 0;                  // drives every random choice; 0: from the clock
  int min_up_ms = 300;                     // a kill lands uniformly in [min_up, max_up]
  int max_up_ms = 3000;                    // after the writers resumed
  bool wait_synced = false;                // --ha: load only while the passive is synced
  bool power_cut = false;                  // --fault power: each SIGKILL also loses what was not synced
  std::string sync;                        // --sync for the servers; empty: their default
  int hostile = 0;                         // hostile clients beside the writers (single server only)
  std::vector<HostileKind> hostile_kinds;  // empty: every kind
  int hostile_connections = 16;            // the most connections one hostile client holds at a time
  int counters = -1;  // conditional writers on one counter (chp_counters.h); -1: parse_options' default
  bool help = false;
};

std::variant<TortureOptions, std::string> parse_options(int argc, char** argv);
const char* usage();

}  // namespace zstore::torture
