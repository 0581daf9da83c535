// FloorRelay: the latency and rate floor of a durable CHP server on one
// core. The relay (relay.h) plus the least storage a server that persists
// an update before it publishes it pays: each turn it takes every KVSET
// waiting on its SUB (up to zstored's drain limit), writes their chp_map
// entries as one batch through Database::write (zstored's database options,
// one write-ahead-log write per turn, put_map_in_key_order: what
// `zstore-bench store --store-path chp-floor` measures alone), then forwards
// the same messages to its PUB. No codec, history, metadata, key index or
// expiry: a server doing less than this is not durable.
#pragma once

#include <filesystem>
#include <string>

#include "tools/bench/source_thread.h"

namespace zstore::bench {

class FloorRelay {
 public:
  // Opens a database in dir (which must not exist; removed again by the
  // destructor) on a thread pinned to cpu, so that RocksDB's flush and
  // compaction threads, started there, share that CPU as zstored's do.
  // Throws std::runtime_error on failure.
  FloorRelay(int cpu, std::filesystem::path dir);
  // The destructor stops the relay, closes the database and removes dir.
  FloorRelay(const FloorRelay&) = delete;
  FloorRelay& operator=(const FloorRelay&) = delete;

  const std::string& input() const { return thread_.endpoints()[0]; }   // writers connect here
  const std::string& output() const { return thread_.endpoints()[1]; }  // the subscriber here

 private:
  // Removed when destroyed, after thread_ (declared later) has joined.
  struct RemovedDir {
    std::filesystem::path path;
    ~RemovedDir();
  };
  RemovedDir dir_;
  SourceThread thread_;
};

}  // namespace zstore::bench
