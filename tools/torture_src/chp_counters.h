// ChpCounters: conditional writers beside the plain ones. Each client loops
// get -> "set value+1 if the key's sequence is still the one read" (a
// confirmed WRITE? with if-seq, protocol/chp_writes.h) on one key they all
// share, through the run's kill cycles. An unknown outcome (the server died
// before it answered) is resolved by sending the same write again (same
// UUID): a server applies one UUID at most once. verify() then checks the
// counter's invariant on the servers' map: its value is the number of
// increments reported applied, and the values those wrote are exactly 1..N,
// each once (none lost, none applied twice).
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tools/torture_src/violations.h"

namespace zstore::torture {

// The counter's key, outside the plain writers' checked keys (chp_history.h).
inline constexpr const char* kCounterKey = "~counter/value";

class ChpCounters {
 public:
  // servers: "tcp://host:P" of every CHP server. Writes the counter's 0,
  // then starts `clients` threads (a violation if the 0 is not applied).
  ChpCounters(std::vector<std::string> servers, int clients, Violations& violations);
  ~ChpCounters();
  ChpCounters(const ChpCounters&) = delete;
  ChpCounters& operator=(const ChpCounters&) = delete;

  // Ends the loops once each client knows its last write's outcome.
  void stop();
  // After stop(): reads the counter from a fresh client of the servers and
  // adds a violation for each broken invariant.
  void verify(std::chrono::milliseconds timeout);
  // "applied 812, refused 3001, unknown 4 (4 resolved), failed 0"
  std::string summary() const;

 private:
  struct Tally {
    std::map<long, int> written;  // value an applied increment wrote -> how many did
    long applied = 0, refused = 0, unknown = 0, resolved = 0, failed = 0;
  };
  void run();

  std::vector<std::string> servers_;
  Violations& violations_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  Tally tally_;
  std::vector<std::thread> threads_;
};

}  // namespace zstore::torture
