// MemoryBudget (memory_budget.h): the shared memtable budget and block cache.
#include "storage/db/memory_budget.h"

#include <rocksdb/options.h>

#include <chrono>
#include <string>

namespace zstore::storage {
namespace {

// A flush asked for ahead of a stall is asked again at most this often while
// the last one has not been picked up, so a burst does not seal a memtable
// per write.
constexpr std::chrono::milliseconds kFlushAheadInterval{50};

std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::uint64_t int_property(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* family, const std::string& name) {
  std::uint64_t value = 0;
  if (!db->GetIntProperty(family, name, &value)) return 0;
  return value;
}

}  // namespace

// allow_stall: writes wait while the memtables hold the budget, until a
// flush frees some; without it the budget only asks for flushes and a burst
// goes past it (48 x 16 MiB values: 513 MiB in chp_map). Memtables are not
// charged to the block cache (WriteBufferManager(size, cache)): a burst of
// writes would then evict the cached blocks that every CHP write's read of
// its key's previous entry needs, and the total bound is the same sum.
MemoryBudget::MemoryBudget(std::uint64_t memtable_bytes, std::uint64_t block_cache_bytes)
    : write_buffers_(std::make_shared<rocksdb::WriteBufferManager>(static_cast<std::size_t>(memtable_bytes),
                                                                   std::shared_ptr<rocksdb::Cache>(), true)),
      block_cache_(rocksdb::NewLRUCache(static_cast<std::size_t>(block_cache_bytes))) {}

// Writes stalled by the budget wait for a flush to free memory, and RocksDB
// starts none for sealed memtables that wait to be merged (chp_map flushes 16
// together): they are no longer mutable, so the budget's own flush rule
// (mutable memtables over 7/8 of it, or over half when all hold it) does
// not count them. With a large value in each, 16 MiB ones could fill the
// budget while waiting for the 16th, and writes would stall for good (a
// known hazard of allow_stall). So a writer asks for their flush before the
// stall: at half the budget, if they hold an eighth of it (chp_map's
// normal sealed memtables, 1 MiB each, hold at most 16 MiB, so its merged
// flushes are kept under a normal load). The request is made by the
// writer's own thread before it writes, never while a write of it stalls.
void MemoryBudget::flush_ahead(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* merged, std::size_t incoming) {
  std::size_t budget = write_buffers_->buffer_size();
  if (write_buffers_->memory_usage() + incoming < budget / 2) return;
  std::int64_t now = steady_ms();
  std::int64_t next = next_flush_ms_.load(std::memory_order_relaxed);
  if (now < next) return;
  std::uint64_t all = int_property(db, merged, rocksdb::DB::Properties::kCurSizeAllMemTables);
  std::uint64_t active = int_property(db, merged, rocksdb::DB::Properties::kCurSizeActiveMemTable);
  if (all < active || all - active < budget / 8) return;
  if (int_property(db, merged, rocksdb::DB::Properties::kMemTableFlushPending) != 0) return;
  if (!next_flush_ms_.compare_exchange_strong(next, now + kFlushAheadInterval.count())) return;  // another writer asks
  rocksdb::FlushOptions flush;
  flush.wait = false;
  flush.allow_write_stall = true;  // else it waits, on this thread, for the stall it is meant to prevent
  db->Flush(flush, merged).PermitUncheckedError();  // a failed flush shows in the next write
}

MemoryUse MemoryBudget::use(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* any_family) const {
  MemoryUse out;
  out.memtable_bytes = write_buffers_->memory_usage();
  out.memtable_budget_bytes = write_buffers_->buffer_size();
  out.block_cache_bytes = int_property(db, any_family, rocksdb::DB::Properties::kBlockCacheUsage);
  out.block_cache_pinned_bytes = int_property(db, any_family, rocksdb::DB::Properties::kBlockCachePinnedUsage);
  out.block_cache_capacity_bytes = int_property(db, any_family, rocksdb::DB::Properties::kBlockCacheCapacity);
  out.writes_stalled = write_buffers_->IsStallActive();
  out.writes_stopped = int_property(db, any_family, rocksdb::DB::Properties::kIsWriteStopped) != 0;
  return out;
}

// Database's, here beside the budget it reports.
MemoryUse Database::memory_use() const {
  if (!db_) return MemoryUse{};
  return memory_->use(db_.get(), handles_[static_cast<std::size_t>(Column::kChpMap)]);
}

}  // namespace zstore::storage
