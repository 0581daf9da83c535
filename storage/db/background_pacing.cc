#include "storage/db/background_pacing.h"

#include <rocksdb/db.h>

namespace zstore::storage {

BackgroundPacing::BackgroundPacing()
    : limiter_(std::make_shared<PacingLimiter>(kPacedBackgroundBytesPerSec, kPacingRefillMicros)) {}

void BackgroundPacing::OnStallConditionsChanged(const rocksdb::WriteStallInfo& info) {
  using Condition = rocksdb::WriteStallCondition;
  std::lock_guard<std::mutex> lock(mu_);
  ++stall_notices_;
  if (info.condition.cur != info.condition.prev) {
    if (info.condition.cur == Condition::kDelayed) ++delays_;
    if (info.condition.cur == Condition::kStopped) ++stops_;
  }
  if (info.condition.cur == Condition::kNormal) {
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
  {
    std::lock_guard<std::mutex> lock(mu_);
    immutables_ = n;
    update_locked();
  }
  reconcile(db);
}

void BackgroundPacing::OnCompactionCompleted(rocksdb::DB* db, const rocksdb::CompactionJobInfo&) { reconcile(db); }

void BackgroundPacing::reconcile(rocksdb::DB* db) {
  std::uint64_t notices = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stalled_.empty()) return;
    notices = stall_notices_;
  }
  WriteHold hold;
  if (!write_hold(db, &hold) || hold.delayed || hold.stopped) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (stall_notices_ != notices) return;  // a notice came meanwhile: the next call decides
  stalled_.clear();
  update_locked();
}

void BackgroundPacing::update_locked() {
  bool lift = !stalled_.empty() || immutables_ >= kLiftAtImmutableMemtables;
  if (lift == lifted_) return;
  lifted_ = lift;
  if (lift) ++lifts_;
  limiter_->SetBytesPerSecond(lift ? kUnpacedBackgroundBytesPerSec : kPacedBackgroundBytesPerSec);
}

bool BackgroundPacing::lifted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lifted_;
}

BackgroundPacing::Stats BackgroundPacing::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {lifted_, lifts_, stalled_.size(), delays_, stops_};
}

bool write_hold(rocksdb::DB* db, WriteHold* out) {
  std::uint64_t delayed_rate = 0;
  std::uint64_t stopped = 0;
  bool known_delayed = db->GetIntProperty(rocksdb::DB::Properties::kActualDelayedWriteRate, &delayed_rate);
  bool known_stopped = db->GetIntProperty(rocksdb::DB::Properties::kIsWriteStopped, &stopped);
  out->delayed = known_delayed && delayed_rate > 0;
  out->stopped = known_stopped && stopped > 0;
  return known_delayed && known_stopped;
}

std::shared_ptr<BackgroundPacing> pacing_in(const rocksdb::DBOptions& options) {
  for (const auto& listener : options.listeners) {
    if (auto pacing = std::dynamic_pointer_cast<BackgroundPacing>(listener)) return pacing;
  }
  return nullptr;
}

}  // namespace zstore::storage
