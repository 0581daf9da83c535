// ChpKeyScan: internal to ChpStore. Builds, on a thread of its own, the key
// index (chp_key_index.h) of a map that was not empty when the store
// opened, so that writes after a restart need not read their keys either.
// It reads every key and expiry from a RocksDB snapshot taken when it is
// constructed, then applies the changes the store reported since
// (changed()), and hands the index over (take()) once it has caught up.
// The store's thread calls everything; the scan's own thread only reads the
// snapshot and fills its table.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "storage/chp/chp_key_index.h"
#include "storage/db/database.h"

namespace rocksdb {
class Snapshot;
}

namespace zstore::storage {

class ChpKeyScan {
 public:
  using Change = ChpKeyIndex::Change;
  // Changes held while the scan runs; past it the scan gives up (the store
  // keeps reading unknown keys, as without it).
  static constexpr std::size_t kMaxPendingChanges = 1'000'000;  // 24 MB

  // Takes the snapshot now and starts the thread. hashed_like: the index
  // whose fingerprints the new one must share; max_bytes: its bound.
  ChpKeyScan(Database* db, const ChpKeyIndex& hashed_like, std::size_t max_bytes);
  ~ChpKeyScan();  // stops the thread (at most a few thousand keys later) and joins
  ChpKeyScan(const ChpKeyScan&) = delete;
  ChpKeyScan& operator=(const ChpKeyScan&) = delete;

  // The keys changed by a write that succeeded after construction, in order.
  void changed(std::span<const Change> changes);
  // The finished index (every key of the map if it fit), once the scan has
  // caught up with every change; nullopt before, or when the scan failed
  // or gave up (failed()).
  std::optional<ChpKeyIndex> take();
  bool failed() const { return failed_.load(std::memory_order_acquire); }

 private:
  void run();
  bool scan();  // false when stopped or failed

  Database* db_;
  const rocksdb::Snapshot* snapshot_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> failed_{false};
  std::mutex mu_;
  std::vector<Change> pending_;  // guarded by mu_
  bool caught_up_ = false;       // guarded by mu_: index_ is final, changes go straight into it
  bool taken_ = false;           // guarded by mu_
  ChpKeyIndex index_;            // the thread's until caught_up_, then guarded by mu_
  std::thread thread_;
};

}  // namespace zstore::storage
