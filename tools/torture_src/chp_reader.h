// ChpReader: a subscriber following the KVPUBs of every CHP server, keeping
// per key the last update it saw (which writer op, at which sequence), and
// checking as it goes that
//   - sequences only go up, across restarts and failovers (with
//     Divergence::kPartition, on each server's publisher: while a partition
//     leaves both members of a pair active, a client follows one of them);
//   - every KVPUB carries an op the writers sent, byte-exact, for that key,
//     and a key's ops are published in the order they were sent (with HA
//     an older op republished by a new active from its pending list is only
//     counted: Binary Star replays the pending KVSETs the passive never saw
//     published, and the snapshot check still requires the latest op to win);
//   - a delete the writers never sent (a server-side expiry) comes only once
//     a ttl set of the key may have expired.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "tools/torture_src/chp_history.h"
#include "tools/torture_src/violations.h"

namespace zstore::torture {

// Whether the servers may publish from maps that diverged: kStale, a
// member restarted alone serves its older map until its peer is back (its
// expiries may be of values the peer overwrote); kPartition, both members
// serve at once, and also publish the same ops at unrelated sequences.
enum class Divergence { kNone, kStale, kPartition };

// What the reader last saw for a key.
struct SeenState {
  std::uint64_t sequence = 0;
  std::optional<std::size_t> op;  // index in the key's ops (nullopt: never saw a writer op)
  bool expired = false;           // the last KVPUB was a server-side expiry of op
  std::int64_t op_seen_ms = 0;    // when op's own KVPUB was seen (0: not seen)
};

class ChpReader {
 public:
  // publishers: "tcp://host:P+1" of every server.
  ChpReader(zmq::context_t& ctx, std::vector<std::string> publishers, const ChpHistory& history, Violations& violations,
            bool ha, Divergence divergence = Divergence::kNone);
  ~ChpReader();
  ChpReader(const ChpReader&) = delete;
  ChpReader& operator=(const ChpReader&) = delete;

  std::map<std::string, SeenState> seen() const;
  std::uint64_t max_sequence() const;
  std::uint64_t kvpubs() const { return kvpubs_.load(); }
  std::uint64_t republished() const { return republished_.load(); }  // HA: older op after a newer one

 private:
  void run();
  void on_kvpub(std::size_t from, const std::string& key, std::uint64_t seq, const std::string& uuid,
                const std::string& body);
  void on_expiry(const std::string& key, std::uint64_t seq, SeenState& state, std::int64_t now);

  zmq::context_t& ctx_;
  std::vector<std::string> publishers_;
  const ChpHistory& history_;
  Violations& violations_;
  bool ha_;
  Divergence divergence_;
  std::vector<std::uint64_t> max_by_publisher_;
  std::atomic<std::uint64_t> republished_{0};
  mutable std::mutex mu_;
  std::map<std::string, SeenState> seen_;
  std::uint64_t max_sequence_ = 0;
  std::atomic<std::uint64_t> kvpubs_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace zstore::torture
