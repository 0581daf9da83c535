// Database: the one RocksDB database of a zstore data directory, with a
// column family per kind of data (see Column). Opening checks the layout
// version; writes go through write() with the configured sync policy.
// A failed write applies nothing; RocksDB then refuses every write until
// recovered, so the next write() first asks it to resume (DB::Resume, at most
// every resume_interval): writing starts again once the storage works again.
// Some errors (a failed log write with EIO) RocksDB cannot resume from: then
// writes stay refused (reads work) until the database is reopened, i.e.
// zstored restarted; write_unrecoverable() tells.
// Thread-safe like rocksdb::DB; the object must outlive every store using it.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "storage/db/status.h"
#include "storage/db/sync_policy.h"
#include "storage/db/write_recovery.h"

namespace rocksdb {
class DB;
class Env;
class ColumnFamilyHandle;
class WriteBatch;
}  // namespace rocksdb

namespace zstore::storage {

// Column families of layout version 1. chp_history, dafka_times and
// chp_versions came later: opening a database without them creates them (read-only opens go
// on without them, and their handle() is then null).
enum class Column : std::uint8_t {
  kMeta,          // small metadata: layout version, last CHP sequence, node address
  kChpMap,        // CHP key -> entry (see chp_entry.h)
  kChpExpiry,     // (expiry ms BE, key) -> "" : TTL index
  kDafkaRecords,  // (subject, partition, last offset BE[, run tag]) -> a record or a run (dafka_log_internal.h)
  kDafkaHeads,    // (subject, partition) -> head offset, floor, counters (dafka_log.h)
  kChpHistory,    // sequence BE -> the update applied at it (chp_history.h)
  kDafkaTimes,    // (subject, partition, offset BE) -> ms BE: time marks for retention (dafka_log.h)
  kChpVersions,   // (key, sequence BE) -> the update with its value: a key's history (chp_versions.h)
};
inline constexpr std::size_t kColumnCount = 8;
std::string_view column_name(Column column);

// The layout this build writes. Version 2: dafka_records may hold runs of
// records (dafka_log_internal.h) and chp_history blocks of updates.
// Version 3: chp_history sets refer to their chp_map entries instead of
// holding a copy. Version 4: chp_history blocks with compact numbers
// (chp_history.h). An older database is read as it is and marked 4 at its
// first writable open, so an older zstore refuses it instead of missing
// records or misreading the history.
inline constexpr std::string_view kLayoutVersion = "4";
inline constexpr std::string_view kLayoutVersionBeforeRuns = "1";
inline constexpr std::string_view kLayoutVersionBeforeHistoryReferences = "2";
inline constexpr std::string_view kLayoutVersionBeforeCompactHistory = "3";

// Bound of the write-ahead log's total size (RocksDB max_total_wal_size):
// beyond it the families pinning the oldest log are flushed. It bounds what
// a restart after kill -9 replays (docs/benchmarks.md, restart).
inline constexpr std::uint64_t kMaxTotalWalBytes = 64ull << 20;
inline constexpr std::string_view kMetaLayoutVersion = "layout_version";
// "1" once close() made everything durable; "0" (written durably by the
// open) while the database is open, so a start after a kill or power cut
// sees "0".
inline constexpr std::string_view kMetaCleanStop = "clean_stop";

// The memory RocksDB holds for the whole database, whatever the column
// family (database_options.h tells how the families' own memtable sizes
// work under it). Memtables: writes wait (a stall, nothing is lost) while
// they hold the budget, so they never hold more than it plus one write
// batch. Today's families flush on their own well below it: chp_map's 32
// of 1 MiB, dafka_records' 4 of 32 MiB, the others held by the write-ahead
// log's bound (64 MiB). Block cache: data, index and filter blocks of every
// family (LRU; pinned blocks may take it briefly past its capacity).
inline constexpr std::uint64_t kDefaultMemtableBudgetBytes = 256ull << 20;
inline constexpr std::uint64_t kDefaultBlockCacheBytes = 64ull << 20;
// The least either may be set to: below it RocksDB would flush or read
// back tables at every few writes.
inline constexpr std::uint64_t kMinMemtableBudgetBytes = 8ull << 20;
inline constexpr std::uint64_t kMinBlockCacheBytes = 4ull << 20;

// What the budgets above hold now (Database::memory_use()).
struct MemoryUse {
  std::uint64_t memtable_bytes = 0;              // every memtable not yet freed (mutable, sealed, flushing)
  std::uint64_t memtable_budget_bytes = 0;       // DatabaseOptions::memtable_budget_bytes
  std::uint64_t block_cache_bytes = 0;           // blocks in the cache
  std::uint64_t block_cache_pinned_bytes = 0;    // of those, in use by readers now
  std::uint64_t block_cache_capacity_bytes = 0;  // DatabaseOptions::block_cache_bytes
  // Writes wait now for a flush to free the memtable budget (the budget's
  // WriteBufferManager has a stall active).
  bool writes_stalled = false;
  // RocksDB's write controller stops writes now (too many level-0 files,
  // memtables or pending compaction bytes: rocksdb.is-write-stopped).
  bool writes_stopped = false;
};

class BackgroundPacing;
class MemoryBudget;

// The file descriptors the database may hold: table files RocksDB keeps
// open (its max_open_files; more tables are reopened on demand) and the
// rest (write-ahead logs, MANIFEST, info log, LOCK, a flush's or
// compaction's outputs, blob files, a checkpoint). zstored keeps this many
// free for it whatever its connections do (server/zstored/fd_budget.h).
inline constexpr int kMaxOpenTableFiles = 512;
inline constexpr std::uint64_t kDatabaseFds = kMaxOpenTableFiles + 64;

struct DatabaseOptions {
  SyncPolicy sync = SyncPolicy::kAlways;
  bool read_only = false;                                 // open without writing anything; no lock held
  bool create_if_missing = true;                          // ignored when read_only
  std::shared_ptr<rocksdb::Env> env;                      // null: the default; tests inject faults (fault_env.h)
  std::chrono::milliseconds resume_interval{100};         // between recovery attempts after a failed write
  std::uint64_t max_total_wal_bytes = kMaxTotalWalBytes;  // tests use a small one
  // For a process confined to fewer cores than it has threads: flush and
  // compaction threads reniced (background_priority.h) and their writes
  // paced (background_pacing.h). Off: RocksDB's own scheduling.
  bool shared_core = false;
  std::uint64_t memtable_budget_bytes = kDefaultMemtableBudgetBytes;  // see above; at least kMin...
  std::uint64_t block_cache_bytes = kDefaultBlockCacheBytes;
};

class Database {
 public:
  // Opens (or creates) the database in dir. Fails with a clear message for a
  // corrupt database (IsCorruption), a directory that is not a zstore
  // database or an unknown layout version (IsRefused).
  static Status Open(const std::string& dir, const DatabaseOptions& options, std::unique_ptr<Database>* out);

  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Applies batch atomically, honouring the sync policy (kAlways fsyncs).
  // On failure nothing of batch is applied; see the recovery note above.
  // While writes are refused (refuse_writes) it fails at once with the reason
  // (IsRefused); suspended after a failure, with that failure's code
  // (IsNoSpace for a full disk); stopped for good, IsRefused.
  Status write(rocksdb::WriteBatch& batch);
  // kReclaims: a batch that deletes more than it adds (Dafka retention);
  // it goes through while writes are refused, since it is what frees space.
  enum class WriteKind : std::uint8_t { kGrows, kReclaims };
  Status write(rocksdb::WriteBatch& batch, WriteKind kind);
  // kByCaller: written to the OS and not fsynced, whatever the policy.
  Status write(rocksdb::WriteBatch& batch, WriteSync sync);
  // As write(), and fsynced before it returns whatever the sync policy:
  // for what a restart needs to open the database and never reuse a
  // sequence (layout version, node address, epochs, the HA state).
  Status write_durable(rocksdb::WriteBatch& batch);
  // Whether the last open of this directory ended with a clean close(), so
  // nothing published was lost since (true for a new database). False after
  // a kill, a power cut, or a restore from a checkpoint of a running one.
  bool stopped_cleanly() const { return stopped_cleanly_; }
  // Makes write() fail with reason until accept_writes() (the disk
  // watermark, server/jobs/disk_watch.h). Reads go on. Thread-safe.
  void refuse_writes(std::string reason);
  void accept_writes();
  bool writes_refused() const { return refused_.load(std::memory_order_acquire); }
  // Whether writes are failing (the last write or sync failed).
  bool write_failing() const;
  // Whether they fail until the database is reopened.
  bool write_unrecoverable() const;
  // The message of the last failed write or sync ("" if none failed).
  std::string last_write_error() const;
  // Forces the write-ahead log to stable storage (kBatch: a WalSyncer calls
  // it on a timer, from its own thread). Safe alongside write().
  Status sync_wal();
  // Whether something was written since the last call (kBatch only; a
  // failed sync_wal() counts as unsynced again). Clears the flag.
  bool take_unsynced() { return unsynced_.exchange(false, std::memory_order_acq_rel); }
  // Syncs the log, flushes every memtable to tables (unless writes are
  // failing) and closes; further use is an error. Idempotent.
  Status close();

  rocksdb::DB* db() { return db_.get(); }
  // The pacing listener installed at open (background_pacing.h): it counts
  // write stalls; null only if the options had none.
  BackgroundPacing* pacing() { return pacing_.get(); }
  // Whether its limiter paces flushes and compactions (shared_core).
  bool paces_background() const { return paces_background_; }
  rocksdb::ColumnFamilyHandle* handle(Column column) { return handles_[static_cast<std::size_t>(column)]; }
  const DatabaseOptions& options() const { return options_; }
  // The memtables' and the block cache's use against their budgets. Cheap
  // (atomics, no scan); any thread.
  MemoryUse memory_use() const;
  const std::string& dir() const { return dir_; }

  // Metadata helpers on the kMeta column. get_meta leaves *value empty and
  // returns Ok when the name is absent.
  Status get_meta(std::string_view name, std::string* value);

 private:
  Database() = default;
  Status open_impl(const std::string& dir, const DatabaseOptions& options);
  Status check_layout(bool fresh);
  Status mark_open(bool fresh, rocksdb::WriteBatch& batch);
  Status write_with(rocksdb::WriteBatch& batch, WriteKind kind, bool sync);
  // Closes without syncing or flushing: after an open found the database
  // damaged, nothing more is written to it.
  void abandon();
  Status recover_if_failing();
  void note_write(const Status& s);
  // The last failed write or sync while writes are failing, else Ok.
  Status write_failure() const;

  std::string dir_;
  DatabaseOptions options_;
  // Shared by every column family; declared before db_, which also holds its parts.
  std::unique_ptr<MemoryBudget> memory_;
  std::unique_ptr<rocksdb::DB> db_;
  std::shared_ptr<BackgroundPacing> pacing_;  // also among db_'s listeners
  bool paces_background_ = false;
  bool stopped_cleanly_ = true;
  std::array<rocksdb::ColumnFamilyHandle*, kColumnCount> handles_{};
  rocksdb::ColumnFamilyHandle* default_handle_ = nullptr;

  std::atomic<bool> unsynced_{false};
  std::atomic<bool> refused_{false};
  mutable std::mutex refusal_mutex_;
  std::string refusal_;     // guarded by refusal_mutex_
  std::mutex sync_mutex_;   // SyncWAL and Resume never run at once
  WriteRecovery recovery_;  // failed writes; its readers never wait for a Resume
};

}  // namespace zstore::storage
