#include "storage/background_pacing.h"

#include <rocksdb/db.h>

namespace zstore::storage {

BackgroundPacing::BackgroundPacing()
    : limiter_(std::make_shared<PacingLimiter>(kPacedBackgroundBytesPerSec, kPacingRefillMicros)) {}

void BackgroundPacing::OnStallConditionsChanged(const rocksdb::WriteStallInfo& info) {
  std::lock_guard<std::mutex> lock(mu_);
  if (info.condition.cur == rocksdb::WriteStallCondition::kNormal) {
    stalled_.erase(info.cf_name);
  } else {
    stalled_.insert(info.cf_name);
  }
  update_locked();
}

// On the writing thread: only counts.
void BackgroundPacing::OnMemTableSealed(const rocksdb::MemTableInfo&) {
  std::lock_guard<std::mutex> lock(mu_);
  ++immutables_;
  update_locked();
}

// RocksDB calls it without its mutex held, so the property can be read.
void BackgroundPacing::OnFlushCompleted(rocksdb::DB* db, const rocksdb::FlushJobInfo&) {
  std::uint64_t n = 0;
  if (!db->GetAggregatedIntProperty(rocksdb::DB::Properties::kNumImmutableMemTable, &n)) return;
  std::lock_guard<std::mutex> lock(mu_);
  immutables_ = n;
  update_locked();
}

void BackgroundPacing::update_locked() {
  bool lift = !stalled_.empty() || immutables_ >= kLiftAtImmutableMemtables;
  if (lift == lifted_) return;
  lifted_ = lift;
  limiter_->SetBytesPerSecond(lift ? kUnpacedBackgroundBytesPerSec : kPacedBackgroundBytesPerSec);
}

bool BackgroundPacing::lifted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lifted_;
}

}  // namespace zstore::storage
