#include "storage/chp/chp_key_scan.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <memory>
#include <string_view>
#include <utility>

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>

#include "storage/chp/chp_entry.h"

namespace zstore::storage {
namespace {

constexpr std::size_t kStopCheckEvery = 4096;

// The scan yields the core to the reactors: it only saves them reads.
void lower_thread_priority() { (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10); }

}  // namespace

ChpKeyScan::ChpKeyScan(Database* db, const ChpKeyIndex& hashed_like, std::size_t max_bytes)
    : db_(db), snapshot_(db->db()->GetSnapshot()), index_(max_bytes, hashed_like) {
  index_.clear(true);  // knows every key of an empty map; a key dropped for room makes it incomplete
  thread_ = std::thread([this] { run(); });
}

ChpKeyScan::~ChpKeyScan() {
  stop_.store(true, std::memory_order_release);
  thread_.join();
  db_->db()->ReleaseSnapshot(snapshot_);
}

void ChpKeyScan::run() {
  lower_thread_priority();
  if (!scan()) return;
  std::vector<Change> batch;
  for (;;) {  // catch up with the writes made meanwhile, until none is left
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (failed()) return;
      if (pending_.empty()) {
        caught_up_ = true;
        return;
      }
      batch.swap(pending_);
    }
    index_.apply(batch);
    batch.clear();
  }
}

bool ChpKeyScan::scan() {
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot_;
  ro.fill_cache = false;
  ro.readahead_size = 2 << 20;
  std::unique_ptr<rocksdb::Iterator> it(db_->db()->NewIterator(ro, db_->handle(Column::kChpMap)));
  std::size_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (++n % kStopCheckEvery == 0 && stop_.load(std::memory_order_acquire)) return false;
    rocksdb::Slice key = it->key();
    std::uint64_t expires = 0;
    std::uint64_t sequence = 0;
    if (!chp_entry_head(std::string_view(it->value().data(), it->value().size()), &sequence, &expires)) {
      index_.clear(false);  // corrupt: the key stays unknown (a write reads it and reports the error)
      break;
    }
    index_.put(index_.fingerprint(std::string_view(key.data(), key.size())), expires, sequence);
    if (!index_.complete()) break;  // full (or a corrupt entry): what it holds still spares those reads
  }
  if (!it->status().ok()) {  // writes read their keys, as without the scan
    failed_.store(true, std::memory_order_release);
    return false;
  }
  return true;
}

void ChpKeyScan::changed(std::span<const Change> changes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (taken_ || failed()) return;
  if (caught_up_) {
    index_.apply(changes);
    return;
  }
  if (pending_.size() + changes.size() > kMaxPendingChanges) {  // gives up: writes read their keys
    failed_.store(true, std::memory_order_release);
    std::vector<Change>().swap(pending_);
    return;
  }
  pending_.insert(pending_.end(), changes.begin(), changes.end());
}

std::optional<ChpKeyIndex> ChpKeyScan::take() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!caught_up_ || taken_ || failed()) return std::nullopt;
  taken_ = true;
  return std::move(index_);
}

}  // namespace zstore::storage
