// zstore-bench command line: the mode and every option, with defaults.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "storage/db/sync_policy.h"

namespace zstore::bench {

struct Options {
  std::string mode;  // relay | chp | snapshot | dafka | replay | restart | storm | resync | store | chain
  int writers = 2;
  std::size_t value_bytes = 100;
  double duration_s = 5.0;
  double warmup_s = 1.0;
  std::uint64_t window = 1000;
  double rate = 0;                        // 0: saturate
  double rate_fraction = 0;               // chp: also run at this fraction of the max rate
  std::string shape = "chp";              // relay: chp | dafka message shape
  std::uint64_t keys = 1000000;           // snapshot: keys loaded; store: writes applied
  std::uint64_t batch = 600;              // store: writes per apply (about a saturated turn)
  std::string store_path = "chp";         // store: chp | chp-floor | dafka | snapshot | replay
  std::uint64_t key_space = 100000;       // chp: keys cycled over
  std::string key_order = "random";       // chp: random | sequential
  std::string subtree = "s0/";            // snapshot: subtree snapshot prefix
  double writer_rate = 1000;              // snapshot: concurrent writer updates/s
  std::uint64_t records = 1000000;        // replay: records produced then fetched
  int clients = 200;                      // storm: clients mirroring the map
  int client_threads = 4;                 // storm: threads running them
  std::string resume = "both";            // storm: on | off | both
  bool ha = false;                        // storm: fail over an HA pair (else restart one server)
  double deadline_s = 600;                // storm: every client current within this, else fail
  int replicas = 0;                       // chain: read replicas in the chain (0: 2); storm: clients spread over them
  std::string server;                     // host:P of a running zstored (CHP)
  std::string dafka_server;               // host:D of a running store publisher
  std::string tower;                      // host:T of its tower
  int server_pid = 0;                     // for RSS with --server
  std::string zstored;                    // binary; default: next to zstore-bench
  std::vector<std::string> zstored_args;  // more flags for every zstored started (--zstored-arg)
  std::string sync = "always";            // --sync of the zstoreds and the in-process databases
  int server_cpu = 1;
  int client_cpu = 0;
  bool vs_relay = false;
  bool vs_floor = false;     // chp, dafka: also the floor relay (floor_relay.h) with the same load
  bool conditional = false;  // chp: also a run of conditional writes (conditional.h)
  bool curve = false;        // chp, dafka: CURVE server and clients (fresh keys in a temp dir)
  bool json = false;
};

// Parses argv. On --help prints usage to `out` and returns nullopt; on a
// usage error throws std::invalid_argument with a message naming the option.
std::optional<Options> parse_options(const std::vector<std::string>& args, std::ostream& out);

// The --sync policy parsed last (default always): what the bench's own
// databases (the floor relay's, the store paths') use.
storage::SyncPolicy database_sync();

}  // namespace zstore::bench
