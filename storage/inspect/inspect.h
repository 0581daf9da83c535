// Read-only inspection of a zstore database, for offline tools (zstore-dump):
// per column family totals and the Dafka partitions with their stored heads.
// Only reads; works on a Database opened read-only. Entries are decoded with
// the same functions the stores use (dafka_log.h), never re-implemented.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "storage/db/database.h"
#include "storage/db/status.h"

namespace zstore::storage {

struct ColumnStats {
  std::uint64_t keys = 0;       // exact, by iteration
  std::uint64_t key_bytes = 0;  // sum of key sizes
  std::uint64_t value_bytes = 0;
  std::uint64_t sst_bytes = 0;   // size of the column's table files on disk (0 while all in memtables/WAL)
  std::uint64_t blob_bytes = 0;  // size of its blob files (large values kept apart: dafka_records' runs)
};

// Counts every entry of column (a full scan, not filling the block cache),
// calling on_entry (when set) once per entry, e.g. for progress.
Status column_stats(Database* db, Column column, ColumnStats* out, const std::function<void()>& on_entry = {});

struct DafkaPartitionInfo {
  std::string subject;
  std::string partition;
  std::uint64_t next = 0;     // next offset expected: head + 1; 0 while offset 0 is missing
  std::uint64_t floor = 0;    // lowest offset retention kept
  std::uint64_t records = 0;  // records held (0 in a first-format head entry: not counted there)
  std::uint64_t bytes = 0;    // their content bytes (same)
};

// Every partition with a kDafkaHeads entry, in (subject, partition) key
// order. Every stored record's partition has one (written in the same batch).
Status dafka_partitions(Database* db, std::vector<DafkaPartitionInfo>* out);

}  // namespace zstore::storage
