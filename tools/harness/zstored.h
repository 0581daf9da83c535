// Zstored: runs the real build/bin/zstored on free loopback ports and a
// temporary data dir, for integration tests and zstore-torture. Restarts
// keep the data dir and the ports.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tools/harness/harness.h"

namespace zstore::testing {

class Zstored {
 public:
  // extra: more flags for every start (e.g. {"--dafka-port", "0"}).
  explicit Zstored(std::vector<std::string> extra = {});
  ~Zstored();

  // Appends flags for every later start (e.g. a pair naming each other).
  void add_args(const std::vector<std::string>& args) { extra_.insert(extra_.end(), args.begin(), args.end()); }
  // Runs later starts under a command that execs zstored with its arguments
  // (e.g. {"prlimit", "--nofile=1024:1024"}).
  void run_under(std::vector<std::string> launcher) { launcher_ = std::move(launcher); }

  // Starts and waits until the log says it is serving; false on time-out
  // or early exit.
  bool start(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  void kill(int signal);
  int wait_exit(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  bool restart() { return start(); }

  std::uint16_t chp_port() const { return chp_port_; }
  std::string chp_endpoint(int offset = 0) const;  // tcp://127.0.0.1:P+offset
  std::string data_dir() const { return data_.str(); }
  std::string log() const;  // the log of every start so far
  // Whether, as an HA passive, it has logged a completed sync from the active.
  bool ha_follower_synced() const { return log().find("HA follower: synced") != std::string::npos; }
  Process* process() { return process_.get(); }

 private:
  TempDir data_;
  TempDir logs_;
  std::uint16_t chp_port_;
  std::vector<std::string> extra_;
  std::vector<std::string> launcher_;
  std::unique_ptr<Process> process_;
  int starts_ = 0;
};

// Makes primary and backup a Binary Star pair naming each other (--ha,
// --ha-bind on two free loopback ports, --ha-peer, --ha-peer-chp), with
// `common` flags added to both. Call before starting them.
void make_ha_pair(Zstored& primary, Zstored& backup, const std::vector<std::string>& common = {});

}  // namespace zstore::testing
