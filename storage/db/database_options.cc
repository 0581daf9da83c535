// RocksDB options of a zstore database (database_options.h): table and
// memtable tuning per column family, and the database-wide options.
#include "storage/db/database_options.h"

#include <rocksdb/filter_policy.h>
#include <rocksdb/listener.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>

#include <cstddef>
#include <memory>

#include "storage/db/background_pacing.h"
#include "storage/db/background_priority.h"
#include "storage/db/sorted_runs_rep.h"

namespace zstore::storage {
namespace {

// The partition of a dafka_records key (subject and partition, without
// the offset and run tag, dafka_log_internal.h). Records of a partition
// arrive in offset order, so a memtable insert starting from the
// partition's previous one is short.
class PartitionOfRecordKey : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "zstore.PartitionOfRecordKey"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    return rocksdb::Slice(key.data(), prefix_size(key));
  }
  // Only keys shaped as a record key (len8 subject len8 partition offset,
  // and a run's tag byte): a range delete starts at the bare partition
  // prefix, so it gets no hint (RocksDB shares one hint per prefix between
  // the point and the range tombstone tables of a memtable, and a hint from
  // one corrupts the other).
  bool InDomain(const rocksdb::Slice& key) const override {
    if (key.size() < 2) return false;
    std::size_t n = static_cast<unsigned char>(key[0]);
    if (key.size() < n + 2) return false;
    std::size_t prefix = prefix_size(key);
    return key.size() == prefix + 8 || key.size() == prefix + 9;
  }

 private:
  static std::size_t prefix_size(const rocksdb::Slice& key) {
    std::size_t n = static_cast<unsigned char>(key[0]);
    return 2 + n + static_cast<unsigned char>(key[1 + n]);
  }
};

// RocksDB's automatic recovery from a full disk waits until the free space
// exceeds every write buffer together (64 MiB and more) and meanwhile makes
// DB::Resume() wait: write() recovers by itself instead, as soon as a write
// can succeed again.
class ManualRecovery final : public rocksdb::EventListener {
 public:
  const char* Name() const override { return "ZstoreManualRecovery"; }
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason, rocksdb::Status error, bool* auto_recovery) override {
    error.PermitUncheckedError();
    *auto_recovery = false;
  }
};

// Block-based tables: bloom filters for point lookups, larger blocks for
// the CHP map's whole scans. Every family's blocks, with their index and
// filter blocks, in the one shared cache (without it each family made its
// own: 8 of them, 8 MiB each with RocksDB 7.8 and 32 MiB with 9.x).
void set_table_options(std::string_view name, const std::shared_ptr<rocksdb::Cache>& block_cache,
                       rocksdb::ColumnFamilyOptions* cfo) {
  rocksdb::ColumnFamilyOptions& cf = *cfo;
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = block_cache;
  // Point lookups on the CHP map and Dafka heads; cheap for the others.
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table.cache_index_and_filter_blocks = true;
  // A snapshot scans chp_map whole: 16 KiB blocks instead of 4 KiB cost it
  // 10% less per key in RocksDB (fewer block reads, copies and checksum
  // calls), and the random writes' point reads nothing measurable.
  if (name == "chp_map") table.block_size = 16 << 10;
  cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
}

// chp_map: sorted-runs memtables with a memtable bloom, merged at flush.
void set_chp_map_options(rocksdb::ColumnFamilyOptions* cfo) {
  rocksdb::ColumnFamilyOptions& cf = *cfo;
  // CHP keys arrive in any order: a skip-list insert then walks about
  // twenty nodes scattered over the arena, one cache miss each, the largest
  // CPU cost of a random write. Sorted runs merge them in sequential passes
  // instead (sorted_runs_rep.h).
  cf.memtable_factory =
      std::make_shared<SortedRunsRepFactory>(SortedRunsRepFactory::kDefaultTailEntries, cf.comparator);
  // Every write looks up the key's previous entry (ChpStore keeps the key
  // count and the TTL index exact): a memtable bloom filter answers most
  // lookups of new keys without a search of the memtable.
  cf.memtable_whole_key_filtering = true;
  cf.memtable_prefix_bloom_size_ratio = 0.02;
  // Small memtables, merged at flush: a sorted-runs insert costs one more
  // merge pass per doubling of the memtable. Eight are flushed together, so
  // level 0 still gets 16 MiB tables; eight more take writes while they
  // flush (RocksDB slows writes down on the last one). At most 32 MiB of
  // memtables with small values. Under the database's memtable budget
  // (MemoryBudget): a memtable holds at least one write, so with large
  // values these hold more (a 16 MiB value makes a 16 MiB memtable); the
  // budget then stalls writes at its limit, and its flush_ahead() flushes
  // these sealed ones before they wait for their eighth.
  cf.write_buffer_size = kChpMapWriteBufferBytes;
  cf.min_write_buffer_number_to_merge = kChpMapWriteBuffersMerged;
  cf.max_write_buffer_number = 2 * kChpMapWriteBuffersMerged;
}

// dafka_records: per-partition insert hints, four 32 MiB memtables, blob files.
void set_dafka_records_options(rocksdb::ColumnFamilyOptions* cfo) {
  rocksdb::ColumnFamilyOptions& cf = *cfo;
  // Memtable insert hints: the skip-list search of each insert was the
  // largest CPU cost of a write (docs/benchmarks.md). With a hint per
  // partition an insert starts from where that partition's previous one
  // went, which is short: its records arrive in offset order.
  cf.memtable_insert_with_hint_prefix_extractor = std::make_shared<PartitionOfRecordKey>();
  // Records are written once and read back in runs. The first levels are
  // rewritten soon by compaction: not compressed (compressing them was
  // most of the compaction that a restart starts and that a replay then
  // waits behind, docs/benchmarks.md); LZ4 below (cheap to read back).
  cf.compression_per_level = {rocksdb::kNoCompression, rocksdb::kNoCompression, rocksdb::kLZ4Compression};
  cf.level0_file_num_compaction_trigger = 8;
  // Four memtables of 32 MiB, not two of 64 (the same 128 MiB at most).
  // With two, the active one filled while the other still flushed on the
  // server's shared core, and RocksDB stopped every write until the flush
  // ended: 100-200 ms every few seconds under a saturating load (LOG:
  // "Stopping writes because we have 2 immutable memtables"), Dafka's
  // p999 98-209 ms against 17-31 ms now (docs/benchmarks.md). The 128 MiB
  // fit in the database's memtable budget (256 MiB by default) beside
  // chp_map's 32 and the other families, which the write-ahead log's bound
  // (64 MiB) flushes; a smaller budget flushes them earlier (RocksDB
  // flushes the family with the oldest memtable once the mutable ones hold
  // 7/8 of it).
  cf.write_buffer_size = 32 << 20;
  cf.max_write_buffer_number = 4;
  // Record runs (dafka_log_internal.h) of kMinBlobBytes and more go to
  // blob files at flush and stay there: compaction moves their keys, not
  // their bytes. Compaction rewriting every record (uncompressed L0/L1,
  // copied into the page cache once per level) was a fifth of the server
  // core under a saturating Dafka load; with blob files zstored ACKed
  // 0.87-0.91 x the relay instead of 0.71-0.78 (docs/benchmarks.md).
  // Retention frees a blob file once compaction has dropped every key
  // into it; garbage collection rewrites what is still live in the oldest
  // quarter of the files, and forces that compaction once half of their
  // bytes are garbage, so a partition kept long does not pin the disk of
  // those trimmed beside it.
  cf.enable_blob_files = true;
  cf.min_blob_size = kMinBlobBytes;
  cf.enable_blob_garbage_collection = true;
  cf.blob_garbage_collection_age_cutoff = 0.25;
  cf.blob_garbage_collection_force_threshold = 0.5;
}

}  // namespace

rocksdb::ColumnFamilyOptions column_options(std::string_view name, const std::shared_ptr<rocksdb::Cache>& block_cache) {
  rocksdb::ColumnFamilyOptions cf;
  set_table_options(name, block_cache, &cf);
  if (name == "chp_map") set_chp_map_options(&cf);
  if (name == "chp_map" || name == "chp_history") {
    // Every CHP write reads its key's previous entry (above), mostly from
    // the first levels with random keys: uncompressed there, a read costs
    // no decompression and a flush no compression (-20% CPU per random
    // write, docs/benchmarks.md); LZ4 below, where most bytes rest.
    cf.compression_per_level = {rocksdb::kNoCompression, rocksdb::kNoCompression, rocksdb::kLZ4Compression};
  }
  if (name == "dafka_records") set_dafka_records_options(&cf);
  return cf;
}

// Column families are created only with a new database: one missing from an
// existing database means a damaged MANIFEST, and creating it empty would
// silently drop that family's data (RocksDB skips log records for it).
rocksdb::DBOptions db_options(const DatabaseOptions& options, bool fresh) {
  rocksdb::DBOptions db;
  db.create_if_missing = options.create_if_missing && !options.read_only;
  db.create_missing_column_families = fresh && !options.read_only;
  db.paranoid_checks = true;
  db.max_background_jobs = 2;
  db.keep_log_file_num = 5;
  // A restart replays the write-ahead log into memtables and keeps the log
  // until they flush normally, instead of first writing it out as small
  // level-0 tables, which then started compactions that a Dafka replay or
  // CHP snapshot right after the restart ran behind (docs/benchmarks.md).
  db.avoid_flush_during_recovery = true;
  // The write-ahead log is bounded: past kMaxTotalWalBytes RocksDB flushes
  // the column families that keep the oldest log alive. Without it the
  // small `meta` family (the CHP sequence, written with every batch) never
  // filled its memtable, so it pinned every log: 860 MB of logs after 6.4M
  // keys, all replayed by a restart after kill -9 (docs/benchmarks.md).
  db.max_total_wal_size = options.max_total_wal_bytes;
  // Bounded (default: unlimited), so connections cannot starve the database
  // of file descriptors: zstored reserves kDatabaseFds for it (database.h).
  db.max_open_files = kMaxOpenTableFiles;
  if (options.env) db.env = options.env.get();
  db.listeners.push_back(std::make_shared<ManualRecovery>());
  // The pacing listener also counts write stalls (for /metrics); its
  // limiter paces flushes and compactions only on a shared core, so they do
  // not hold a reactor's core for whole scheduler slices.
  auto pacing = std::make_shared<BackgroundPacing>();
  if (options.shared_core) {
    db.listeners.push_back(make_background_priority());
    db.rate_limiter = pacing->limiter();
    db.writable_file_max_buffer_size = kBackgroundWriteBufferBytes;
  }
  db.listeners.push_back(std::move(pacing));
  return db;
}

}  // namespace zstore::storage
