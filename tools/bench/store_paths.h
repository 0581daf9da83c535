// The storage work of each path zstore-bench measures end to end, alone,
// in process, with no ZeroMQ: what zstored's reactor does per message on
// top of what the relay or a ZeroMQ-only source does (store_mode.h turns
// it into a bound). Each runs on the calling thread against a database in
// `dir` (created, and left for the caller to remove).
//
//   chp_writes:     --keys CHP writes (the chp mode's keys and values)
//                   through ChpStore::apply in batches of --batch.
//   chp_floor_writes: the same writes with only their chp_map entries, in
//                   key order, one WAL write per batch: no history,
//                   metadata, previous-entry reads or indexes. The least
//                   RocksDB work a write persisted before it is published
//                   costs with zstored's options.
//   dafka_writes:   --records Dafka records, the dafka mode's writers each
//                   appending to its own partition in offset order, through
//                   DafkaLog::append in batches of --batch.
//   snapshot_reads: loads --keys keys once each (the snapshot mode's load,
//                   not timed), then reads them all through one ChpStore
//                   snapshot cursor by views, as zstored sends KVSYNCs.
//   replay_reads:   appends --records records (not timed), closes and opens
//                   the database again (a restart), then reads every
//                   partition from offset 0 through one DafkaLog cursor.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tools/bench/load.h"
#include "tools/bench/options.h"

namespace zstore::bench {

struct StoreRun {
  std::uint64_t messages = 0;  // writes applied, keys or records read
  double seconds = 0;
  double thread_cpu = 0;          // the calling thread's CPU seconds: what a reactor pays
  double process_cpu = 0;         // with RocksDB's flush and compaction threads meanwhile
  std::uint64_t prior_reads = 0;  // chp_writes: writes that read their key's previous entry
};

// The Dafka partitions the store paths write: one per writer, named as a
// node address (32 hexadecimal characters), under subject kBenchTopic.
std::vector<std::string> store_partitions(int writers);

StoreRun chp_writes(const Options& o, const LoadSpec& spec, const std::filesystem::path& dir);
StoreRun chp_floor_writes(const Options& o, const LoadSpec& spec, const std::filesystem::path& dir);
StoreRun dafka_writes(const Options& o, const LoadSpec& spec, const std::filesystem::path& dir);
StoreRun snapshot_reads(const Options& o, const LoadSpec& spec, const std::filesystem::path& dir);
StoreRun replay_reads(const Options& o, const LoadSpec& spec, const std::filesystem::path& dir);

}  // namespace zstore::bench
