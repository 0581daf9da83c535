// MemoryBudget: the memory every column family of a Database shares (not a
// public header): one WriteBufferManager for all memtables, which stalls
// writes while they hold the budget, and one LRU block cache for the data,
// index and filter blocks of every table (DatabaseOptions, database.h).
// Thread-safe; it must outlive the rocksdb::DB it was given to (the DB also
// holds both parts).
#pragma once

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/write_buffer_manager.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "storage/db/database.h"

namespace zstore::storage {

class MemoryBudget {
 public:
  MemoryBudget(std::uint64_t memtable_bytes, std::uint64_t block_cache_bytes);

  // For DBOptions::write_buffer_manager and BlockBasedTableOptions::block_cache.
  const std::shared_ptr<rocksdb::WriteBufferManager>& write_buffers() const { return write_buffers_; }
  const std::shared_ptr<rocksdb::Cache>& block_cache() const { return block_cache_; }

  // Called by a writer before it writes `incoming` bytes, on its own thread:
  // when the memtables hold half the budget and `merged`'s sealed memtables
  // (waiting to be flushed together, as chp_map's are) hold an eighth of it,
  // asks for their flush now, without waiting for it. Cheap otherwise (one
  // atomic read). See the .cc for why the budget needs it.
  void flush_ahead(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* merged, std::size_t incoming);

  // The use of both against their limits; any_family: a handle of db (every
  // family reports the shared cache).
  MemoryUse use(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* any_family) const;

 private:
  std::shared_ptr<rocksdb::WriteBufferManager> write_buffers_;
  std::shared_ptr<rocksdb::Cache> block_cache_;
  std::atomic<std::int64_t> next_flush_ms_{0};  // steady clock: at most one request per kFlushAheadInterval
};

}  // namespace zstore::storage
