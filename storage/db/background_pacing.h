// BackgroundPacing: RocksDB's flushes and compactions write through a rate
// limiter that refills every 100 us, so a background job yields the core it
// shares with zstored's reactors every few tens of KB it writes, instead of
// running whole scheduler slices (4-5 ms seen on the server's core, the
// tail of the CHP latency at moderate rates). The limit is lifted when a
// flush falls behind the writes (below), so pacing does not hold back a
// flush that writes are about to wait for.
// Only with --shared-core (DatabaseOptions::shared_core).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include <rocksdb/listener.h>
#include <rocksdb/rate_limiter.h>

#include "storage/db/database_options.h"
#include "storage/db/pacing_limiter.h"

namespace zstore::storage {

// Bytes per second of flush and compaction writes while paced.
inline constexpr std::int64_t kPacedBackgroundBytesPerSec = std::int64_t{400} << 20;
// The limiter's refill period: a job writes at most rate x period (40 KiB)
// before it may wait for the next refill.
inline constexpr std::int64_t kPacingRefillMicros = 100;
// The limit while lifted: no limit in practice. It is lifted while a column
// family stalls writes (RocksDB delays or stops them), and while the next
// constant's count of memtables wait for a flush or are being flushed.
inline constexpr std::int64_t kUnpacedBackgroundBytesPerSec = std::int64_t{1} << 40;
// Memtables of all column families together: one before the count where
// RocksDB starts to delay chp_map's writes (its most but one). Lifted
// earlier it was lifted most of the time under random updates and paced
// nothing; with no such lift a flush behind a saturating load ran into
// RocksDB stopping writes.
inline constexpr std::uint64_t kLiftAtImmutableMemtables = 2 * kChpMapWriteBuffersMerged - 2;
// WritableFileWriter's buffer (RocksDB's default is 1 MiB): a table is
// written, and so paced, in pieces of at most this.
inline constexpr std::size_t kBackgroundWriteBufferBytes = std::size_t{64} << 10;

// One per database: the limiter for DBOptions::rate_limiter and the
// listener that lifts its limit (above). The memtable count is RocksDB's
// after each flush, plus one per memtable sealed since.
class BackgroundPacing final : public rocksdb::EventListener {
 public:
  BackgroundPacing();

  const char* Name() const override { return "ZstoreBackgroundPacing"; }
  void OnStallConditionsChanged(const rocksdb::WriteStallInfo& info) override;
  void OnMemTableSealed(const rocksdb::MemTableInfo& info) override;
  void OnFlushCompleted(rocksdb::DB* db, const rocksdb::FlushJobInfo& info) override;
  void OnCompactionCompleted(rocksdb::DB* db, const rocksdb::CompactionJobInfo& info) override;

  // Forgets the stalls RocksDB no longer has (it neither delays nor stops
  // writes). Each thread that changes a family's stall condition delivers
  // its notice after releasing RocksDB's mutex, so two notices can arrive
  // in the wrong order: a writer's "stopped" after a flush's "normal" again.
  // That would leave the limit lifted until the family's next stall (seen
  // once under a saturating load: after one delay and one stop, lifted for
  // the rest of a 40 s run, RocksDB long back to normal). Called at the end
  // of each flush and compaction, and by each /metrics scrape; not with
  // RocksDB's mutex held.
  void reconcile(rocksdb::DB* db);

  const std::shared_ptr<rocksdb::RateLimiter>& limiter() const { return limiter_; }
  // Whether the limit is lifted now.
  bool lifted() const;

  // What it has seen since the database opened, for /metrics.
  struct Stats {
    bool lifted = false;
    std::uint64_t lifts = 0;             // times the limit was lifted
    std::uint64_t stalled_families = 0;  // column families delaying or stopping writes now
    std::uint64_t delays = 0;            // times a column family began to delay writes
    std::uint64_t stops = 0;             // times a column family began to stop writes
  };
  Stats stats() const;

 private:
  void update_locked();  // sets the limit for stalled_ and immutables_

  std::shared_ptr<rocksdb::RateLimiter> limiter_;
  mutable std::mutex mu_;
  std::set<std::string> stalled_;  // column families stalling writes, by their last notice
  std::uint64_t stall_notices_ = 0;
  std::uint64_t immutables_ = 0;  // as of the last flush, plus those sealed since
  bool lifted_ = false;
  std::uint64_t lifts_ = 0;
  std::uint64_t delays_ = 0;
  std::uint64_t stops_ = 0;
};

// Whether RocksDB holds writes back now (any column family): slowing them
// down, or stopping them until a flush or compaction catches up. A field
// RocksDB cannot tell stays false; the result is false then.
struct WriteHold {
  bool delayed = false;
  bool stopped = false;
};
bool write_hold(rocksdb::DB* db, WriteHold* out);

// The BackgroundPacing among options' listeners (db_options installs one),
// or null. Read once at open: the options of an open database are copied
// under RocksDB's mutex (Database::pacing()).
std::shared_ptr<BackgroundPacing> pacing_in(const rocksdb::DBOptions& options);

}  // namespace zstore::storage
