// RocksDB options of a zstore database (not a public header): the tuning of
// each column family and of the database, shared by the database.cc opener.
#pragma once

#include <rocksdb/options.h>

#include <cstdint>
#include <memory>
#include <string_view>

#include "storage/db/database.h"

namespace zstore::storage {

// dafka_records values of at least this size (record runs) are kept in
// blob files, written once (see column_options).
inline constexpr std::uint64_t kMinBlobBytes = 4096;

// chp_map's memtables: this many bytes each, flushed this many together,
// twice as many at most (see column_options).
inline constexpr std::size_t kChpMapWriteBufferBytes = std::size_t{2} << 20;
inline constexpr int kChpMapWriteBuffersMerged = 8;

// The options of the column family named name (a kColumnNames entry, or
// the unused default family), its tables cached in block_cache (shared by
// every family: MemoryBudget, memory_budget.h).
rocksdb::ColumnFamilyOptions column_options(std::string_view name, const std::shared_ptr<rocksdb::Cache>& block_cache);

// The database options for opening with options; fresh: a new database,
// whose column families are created (only then, see db_options's comment).
rocksdb::DBOptions db_options(const DatabaseOptions& options, bool fresh);

}  // namespace zstore::storage
