// Read-only statistics and online backup of a running server's Database,
// safe to call from any thread while the reactors write (RocksDB is
// thread-safe); the Database must stay open for the duration of each call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/db/database.h"

namespace zstore::server {

struct ColumnSizes {
  std::string name;             // column family name (storage::column_name)
  std::uint64_t sst_bytes = 0;  // live SST files
  std::uint64_t memtable_bytes = 0;
  std::uint64_t level0_files = 0;              // RocksDB slows, then stops, writes as they pile up
  std::uint64_t immutable_memtables = 0;       // sealed, waiting for or in a flush
  std::uint64_t pending_compaction_bytes = 0;  // RocksDB's estimate of the compaction owed
};

std::vector<ColumnSizes> column_sizes(storage::Database& db);

// Whether RocksDB holds writes back now, and how often it began to since
// the database opened (storage/db/background_pacing.h).
struct WriteStalls {
  bool delayed = false;  // writes slowed down (some family's stall condition)
  bool stopped = false;  // writes wait until a flush or compaction catches up
  std::uint64_t delays = 0;
  std::uint64_t stops = 0;
  bool paced = false;          // flushes and compactions are paced at all (--shared-core)
  bool pacing_lifted = false;  // flushes and compactions write unpaced now
  std::uint64_t pacing_lifts = 0;
};

WriteStalls write_stalls(storage::Database& db);

enum class CheckpointError { kNone, kBadTarget, kExists, kFailed };

struct CheckpointResult {
  CheckpointError error = CheckpointError::kNone;
  std::string message;  // what went wrong, or where the checkpoint is
};

// Writes a consistent RocksDB checkpoint (hard links where possible) of
// every column family into dir, which must be an absolute path that does
// not exist yet and whose parent directory exists. `zstored --data-dir dir`
// then starts from that state.
CheckpointResult write_checkpoint(storage::Database& db, const std::string& dir);

}  // namespace zstore::server
