// ChpStore's history bounds and readers (chp_store.h, chp_history.h): the
// oldest entries are dropped with range deletes, never more than
// kMaxDropPerCall per call, so no trim holds the reactor long.
#include <algorithm>
#include <limits>
#include <memory>

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include "protocol/byte_order.h"
#include "storage/chp_history.h"
#include "storage/chp_store.h"
#include "storage/slice.h"

namespace zstore::storage {
namespace {

constexpr std::uint64_t kMaxDropPerCall = 65536;
constexpr std::uint64_t kNoCutoff = std::numeric_limits<std::uint64_t>::max();

std::string sequence_key(std::uint64_t sequence) {
  std::string key;
  protocol::put_be<std::uint64_t>(key, sequence);
  return key;
}

}  // namespace

std::uint64_t ChpStore::history_slack() const { return std::clamp<std::uint64_t>(history_max_ / 16, 1, kMaxDropPerCall / 2); }

Status ChpStore::trim_history() {
  if (history_count_ <= history_max_) return Status::Ok();
  return drop_oldest_history(std::min(history_count_ - history_max_, kMaxDropPerCall), kNoCutoff);
}

Status ChpStore::trim_history_older_than(std::uint64_t cutoff_ms) {
  if (history_count_ == 0 || !keeps_history()) return Status::Ok();
  return drop_oldest_history(kMaxDropPerCall, cutoff_ms);
}

// Walks the oldest entries (an entry holds one update or a block of them),
// at most limit updates, stopping at the first entry with an update written
// at or after cutoff_ms (a time of 0, unknown, counts as old), and deletes
// what it walked with one range delete, in the batch that moves
// history_from past it.
Status ChpStore::drop_oldest_history(std::uint64_t limit, std::uint64_t cutoff_ms) {
  auto* cf = db_->handle(Column::kChpHistory);
  if (cf == nullptr) return Status::Ok();
  std::unique_ptr<rocksdb::Iterator> it(db_->db()->NewIterator(rocksdb::ReadOptions(), cf));
  it->SeekToFirst();
  if (!it->Valid()) return it->status().ok() ? Status::Ok() : Status::Error("history trim: " + it->status().ToString());
  std::string first = it->key().ToString();
  std::uint64_t dropped = 0;
  std::uint64_t last_dropped = 0;
  for (; it->Valid(); it->Next()) {
    HistoryEntryInfo info;
    if (!history_entry_info(std::string_view(it->key().data(), it->key().size()),
                            std::string_view(it->value().data(), it->value().size()), &info)) {
      return Status::Error("history trim: corrupt CHP history entry");
    }
    if (dropped + info.count > limit) break;
    if (cutoff_ms != kNoCutoff && info.newest_ms >= cutoff_ms) break;
    dropped += info.count;
    last_dropped = info.last;
  }
  if (!it->status().ok()) return Status::Error("history trim: " + it->status().ToString());
  if (dropped == 0 || last_dropped == kNoCutoff) return Status::Ok();
  std::uint64_t count = history_count_ - std::min(history_count_, dropped);
  std::uint64_t from = std::max(history_from_, last_dropped);
  rocksdb::WriteBatch batch;
  batch.DeleteRange(cf, slice(first), sequence_key(last_dropped + 1));
  put_meta(batch, last_sequence_, epochs_, from, count);
  Status s = db_->write(batch);
  if (!s.ok()) return s;
  history_from_ = from;
  history_count_ = count;
  return Status::Ok();
}

std::unique_ptr<ChpSnapshotCursor> ChpStore::history_after(std::uint64_t after) {
  if (after < history_from_ || history_max_ == 0 || db_->handle(Column::kChpHistory) == nullptr) return nullptr;
  return history_cursor(db_, after, last_sequence_);
}

bool ChpStore::keeps_history() const {
  return history_max_ > 0 && db_->handle(Column::kChpHistory) != nullptr;
}

std::unique_ptr<ChpSnapshotCursor> ChpStore::resume_after(std::uint64_t after, std::string_view prefix) {
  if (after > last_sequence_ || !contains_sequence(epochs_, after)) return nullptr;
  if (after < history_from_ || !keeps_history()) return nullptr;
  return history_cursor(db_, after, last_sequence_, prefix);
}

}  // namespace zstore::storage
