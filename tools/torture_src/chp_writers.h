// ChpWriters: threads sending KVSETs (plain sets, sets with a short ttl and
// deletes) to every CHP server's collector (or one, see one_side), in small bursts, each over its
// own set of keys (plus a few keys that only get ttl sets), recording every op in a ChpHistory before sending it.
// The PUB sockets use ZMQ_IMMEDIATE so nothing is queued for a dead server
// and delivered late (which would push a ttl's expiry past what the history
// allows). pause() parks every writer before it returns.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "tools/torture_src/chp_history.h"

namespace zstore::torture {

struct WriterOptions {
  int writers = 3;
  int keys_per_writer = 128;
  int ttl_keys_per_writer = 16;  // keys that only get ttl sets
  std::uint64_t seed = 1;
  // Writer i < number of servers sends only to server i (a client on one
  // side of a partition); the others send to every server.
  bool one_side = false;
};

class ChpWriters {
 public:
  // collectors: "tcp://host:P+2" of every server.
  ChpWriters(zmq::context_t& ctx, std::vector<std::string> collectors, ChpHistory& history, WriterOptions options);
  ~ChpWriters();
  ChpWriters(const ChpWriters&) = delete;
  ChpWriters& operator=(const ChpWriters&) = delete;

  void pause();  // returns once no writer is between recording and sending
  void resume();
  std::uint64_t sent() const { return sent_.load(); }

 private:
  void run(int id);

  zmq::context_t& ctx_;
  std::vector<std::string> collectors_;
  ChpHistory& history_;
  WriterOptions options_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> paused_{false};
  std::atomic<int> parked_{0};
  std::atomic<std::uint64_t> sent_{0};
  std::vector<std::thread> threads_;
};

}  // namespace zstore::torture
