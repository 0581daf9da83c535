// FloorRelay: the latency and rate floor of a durable server on one core.
// The relay (relay.h) plus the least storage a server that persists a
// message before it publishes (or ACKs) it pays: each turn it takes every
// message waiting on its SUB (up to zstored's drain limit of 4096), writes
// them as one batch through Database::write (zstored's database options,
// one write-ahead-log write per turn), then forwards the same messages to
// its PUB. For the CHP shape: each KVSET's chp_map entry, in
// put_map_in_key_order (what `zstore-bench store --store-path chp-floor`
// measures alone); no codec, history, metadata, key index or expiry. For
// the Dafka shape: each RECORD's partition and offset read from its header
// (decode_borrowing), the records put as DafkaLog::append stores them (runs
// per partition, put_dafka_records); no head, time mark, duplicate or gap
// check. A server doing less than this is not durable.
#pragma once

#include <filesystem>
#include <string>

#include "tools/bench/load.h"
#include "tools/bench/source_thread.h"

namespace zstore::bench {

class FloorRelay {
 public:
  // Opens a database in dir (which must not exist; removed again by the
  // destructor) for messages of shape, on a thread pinned to cpu, so that
  // RocksDB's flush and compaction threads, started there, share that CPU
  // as zstored's do. Throws std::runtime_error on failure.
  FloorRelay(int cpu, std::filesystem::path dir, Shape shape);
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
