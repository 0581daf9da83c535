// StormFleet: the N lightweight CHP clients of `zstore-bench storm`. Each is
// what a server sees of a clone client (a SUB on the publishers P+1 of every
// member, a DEALER to the snapshot port P) without the map: it counts the
// KVSYNCs of its snapshot and keeps only its last applied sequence (the
// KTHXBAI's, then each KVPUB above it). A few threads run them all with
// zmq_poll; the bench thread starts a round (every client asks one endpoint
// for a snapshot, with or without its last sequence) and reads the results.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <zmq.hpp>

namespace zstore::bench {

// What the bench thread reads of one client (written by its thread).
struct StormStatus {
  std::atomic<int> done_round{0};      // the last round whose KTHXBAI came
  std::atomic<std::uint64_t> last{0};  // last applied sequence
  std::atomic<std::uint64_t> keys{0};  // KVSYNCs of the current round
  std::atomic<bool> resumed{false};    // the round's KTHXBAI said resumed=1
  // Not resumed because its sequence is not a point of the server's history
  // (the KTHXBAI's epochs): it applied updates the new active never had
  // (published by the killed member as it died), so only the map is right.
  std::atomic<bool> ahead{false};
  std::atomic<std::int64_t> first_reply_ns{0};  // first message of the round on the DEALER
  std::atomic<std::int64_t> done_ns{0};         // its KTHXBAI
  std::atomic<std::uint64_t> gaps{0};           // KVPUBs not last + 1 while following
};

// One round's outcome, once every client finished it.
struct StormRound {
  std::uint64_t keys = 0;           // KVSYNCs received, all clients
  int resumed = 0;                  // clients answered with resumed=1
  int ahead = 0;                    // clients answered with the map, their sequence unknown to the server
  std::int64_t first_reply_ns = 0;  // earliest first reply
  std::int64_t last_done_ns = 0;    // latest KTHXBAI
};

// Whether a KTHXBAI's properties name the server's epochs and `sequence` is
// not a point of them: the server never applied that sequence, so a resume
// after it is rightly answered with the whole map.
bool sequence_unknown_to(std::string_view kthxbai_properties, std::uint64_t sequence);

class StormFleet {
 public:
  // publishers: every member's tcp://host:P+1 (a client follows them all;
  // only the active publishes).
  StormFleet(int clients, int threads, std::vector<std::string> publishers);
  ~StormFleet();
  StormFleet(const StormFleet&) = delete;
  StormFleet& operator=(const StormFleet&) = delete;

  // Starts a round: every client asks `endpoint` (tcp://host:P) for the whole
  // map, with its last sequence when `resume`. A client with no reply within
  // kRetryMs asks again on a new DEALER (a passive answers no snapshot)
  // while no client got any reply in this round, after kServingRetryMs once
  // one did (its request may have reached the passive before the takeover).
  void request(const std::string& endpoint, bool resume);
  bool all_done() const;
  int clients_done() const;
  StormRound round() const;  // meaningful once all_done()
  std::uint64_t min_sequence() const;
  std::uint64_t gaps() const;

  static constexpr int kRetryMs = 300;
  static constexpr int kServingRetryMs = 5000;

 private:
  struct Request {
    int id = 0;
    std::string endpoint;
    bool resume = false;
  };
  void run(int first, int count);
  Request current() const;

  zmq::context_t context_;
  std::vector<std::string> publishers_;
  std::unique_ptr<StormStatus[]> status_;
  int clients_;
  std::atomic<int> answered_round_{0};
  mutable std::mutex mutex_;
  Request request_;
  std::atomic<int> round_{0};
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

}  // namespace zstore::bench
