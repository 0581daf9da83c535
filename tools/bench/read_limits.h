// The physical limits of the read paths, the counterpart of Relay for the
// write paths: in-process ZeroMQ servers that answer the requests zstored
// answers, with the same message shapes and socket options, but from
// memory: no storage. Each runs on a SourceThread, optionally pinned to one
// CPU (like zstored), until destroyed.
//
// SnapshotSource: a ROUTER that answers every ICANHAZ? with `keys` KVSYNCs
//   (16-byte key, 8-byte sequence, 16-byte uuid, no properties, a
//   value_bytes value) then KTHXBAI, as zstored's snapshot socket does.
// FetchSource: a Dafka store without storage. Its tower endpoint reads
//   node beacons; it subscribes to the FETCHes of each node it learns of
//   and answers each FETCH with the DIRECT-RECORDs asked for (value_bytes
//   of content each) on its publisher, as zstored's store does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tools/bench/source_thread.h"

namespace zstore::bench {

class SnapshotSource {
 public:
  SnapshotSource(int cpu, std::uint64_t keys, std::size_t value_bytes);
  const std::string& endpoint() const { return thread_.endpoints()[0]; }  // ask ICANHAZ? here

 private:
  SourceThread thread_;
};

class FetchSource {
 public:
  FetchSource(int cpu, std::size_t value_bytes);
  const std::string& tower() const { return thread_.endpoints()[0]; }      // nodes beacon here
  const std::string& publisher() const { return thread_.endpoints()[1]; }  // DIRECT-RECORDs from here

 private:
  SourceThread thread_;
};

}  // namespace zstore::bench
