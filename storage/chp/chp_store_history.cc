// ChpStore's history bounds and readers (chp_store.h, chp_history.h): the
// oldest entries are dropped with range deletes, never more than
// kMaxDropPerCall updates per call, so no trim holds the reactor long.
#include <algorithm>
#include <limits>
#include <memory>

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include "protocol/byte_order.h"
#include "storage/chp/chp_history.h"
#include "storage/chp/chp_store.h"
#include "storage/db/rocks_status.h"
#include "storage/db/slice.h"

namespace zstore::storage {
namespace {

// A trim reads every update it drops (0.3-0.5 MB per 2048 updates of 100 B
// values). At 65536 per call a count trim held the reactor for about 2 ms
// every 32768 updates, which was most of the CHP p99 at a paced rate
// (docs/benchmarks.md); at 4096 a trim takes about 0.1-0.2 ms and the
// count bound's slack (at most half of this) keeps trims 2048 updates
// apart, one range delete each.
constexpr std::uint64_t kMaxDropPerCall = 4096;
// And at most about 1 MiB of entries, whatever the values' size.
constexpr std::size_t kMaxDropBytesPerCall = std::size_t{1} << 20;
constexpr std::uint64_t kNoCutoff = std::numeric_limits<std::uint64_t>::max();

std::string sequence_key(std::uint64_t sequence) {
  std::string key;
  protocol::put_be<std::uint64_t>(key, sequence);
  return key;
}

}  // namespace

std::uint64_t ChpStore::history_slack() const {
  return std::clamp<std::uint64_t>(history_max_ / 16, 1, kMaxDropPerCall / 2);
}

// Bounded steps, as many as the bytes just written need (a step drops up
// to kMaxDropBytesPerCall), so the count bound keeps up with large values
// while no step holds the reactor long.
void ChpStore::trim_history_after_write(std::size_t written_bytes) {
  std::size_t steps = 1 + written_bytes / kMaxDropBytesPerCall;
  while (steps-- > 0 && history_count_ > history_max_ + history_slack()) {
    std::uint64_t before = history_count_;
    if (!trim_history().ok() || history_count_ == before) return;  // retried at the next write
  }
}

Status ChpStore::trim_history() {
  if (history_count_ <= history_max_) return Status::Ok();
  return drop_oldest_history(std::min(history_count_ - history_max_, kMaxDropPerCall), kNoCutoff);
}

Status ChpStore::trim_history_older_than(std::uint64_t cutoff_ms) {
  if (history_count_ == 0 || !keeps_history()) return Status::Ok();
  return drop_oldest_history(kMaxDropPerCall, cutoff_ms);
}

// What a walk of the oldest history entries found: how many updates to
// drop, the last of them, and whether it ran to the end of its iterator.
struct ChpStore::HistoryWalk {
  std::uint64_t dropped = 0;
  std::uint64_t last_dropped = 0;
  bool reached_end = false;
};

// Walks the oldest entries (an entry holds one update or a block of them),
// at most limit updates and about kMaxDropBytesPerCall bytes, stopping at
// the first entry with an update written at or after cutoff_ms (a time of
// 0, unknown, counts as old).
Status ChpStore::walk_oldest_history(rocksdb::Iterator* it, std::uint64_t limit, std::uint64_t cutoff_ms,
                                     HistoryWalk* walk) const {
  *walk = HistoryWalk{};
  // From the first entry still in the history (the one holding
  // history_from_ + 1, keyed by its last sequence): the entries before it
  // were dropped by range deletes that compaction may not have applied
  // yet, and a walk from the start would step over each of them again.
  std::size_t walked = 0;  // bytes of the entries to drop
  for (it->Seek(sequence_key(history_from_ + 1)); it->Valid(); it->Next()) {
    HistoryEntryInfo info;
    if (!history_entry_info(std::string_view(it->key().data(), it->key().size()),
                            std::string_view(it->value().data(), it->value().size()), cutoff_ms != kNoCutoff, &info)) {
      return Status::Corruption("history trim: corrupt CHP history entry");
    }
    if (walk->dropped + info.count > limit) return Status::Ok();
    if (cutoff_ms != kNoCutoff && info.newest_ms >= cutoff_ms) return Status::Ok();
    walk->dropped += info.count;
    walk->last_dropped = info.last;
    walked += it->value().size();
    if (walked >= kMaxDropBytesPerCall) return Status::Ok();  // large values: fewer updates, at least one entry
  }
  if (!it->status().ok()) return from_rocks(it->status(), "history trim");
  walk->reached_end = true;
  return Status::Ok();
}

// Walks the oldest entries (walk_oldest_history) and deletes what it walked
// with one range delete, in the batch that moves history_from past it. The
// walk reads the kept iterator (trim_reader_), whose view may predate the
// newest entries: only the history's tail is written after it was made, so
// a walk that reaches its end is walked again on a new one.
Status ChpStore::drop_oldest_history(std::uint64_t limit, std::uint64_t cutoff_ms) {
  auto* cf = db_->handle(Column::kChpHistory);
  if (cf == nullptr) return Status::Ok();
  auto now = KeptIterator::Clock::now();
  bool fresh = false;
  HistoryWalk walk;
  rocksdb::Iterator* it = trim_reader_.get(now, &fresh);
  Status s = walk_oldest_history(it, limit, cutoff_ms, &walk);
  if (s.ok() && walk.reached_end && !fresh) {
    it = trim_reader_.renew(now);
    s = walk_oldest_history(it, limit, cutoff_ms, &walk);
  }
  if (!s.ok()) {
    trim_reader_.reset();
    return s;
  }
  if (walk.dropped == 0 || walk.last_dropped == kNoCutoff) return Status::Ok();
  std::uint64_t count = history_count_ - std::min(history_count_, walk.dropped);
  std::uint64_t from = std::max(history_from_, walk.last_dropped);
  rocksdb::WriteBatch batch;
  // The versions of the updates dropped go in the same batch: chp_versions
  // never holds one that chp_history no longer does.
  if (s = delete_versions(it, walk.last_dropped, batch); !s.ok()) {
    trim_reader_.reset();
    return s;
  }
  // From the smallest key: also whatever an older zstore left below
  // history_from_ (the walk started above it).
  batch.DeleteRange(cf, rocksdb::Slice(), sequence_key(walk.last_dropped + 1));
  put_meta(batch, last_sequence_, epochs_, from, count);
  s = db_->write(batch);
  if (!s.ok()) return s;
  history_from_ = from;
  history_count_ = count;
  return Status::Ok();
}

// Deletes the version of each update from history_from_ + 1 to
// last_dropped (the entries a walk just chose to drop, read again with its
// iterator), except those at or below versions_from_, which have none.
Status ChpStore::delete_versions(rocksdb::Iterator* it, std::uint64_t last_dropped, rocksdb::WriteBatch& batch) const {
  auto* versions = db_->handle(Column::kChpVersions);
  // Off: chp_versions was emptied at open and no tombstones go there.
  if (!key_history_ || versions == nullptr || last_dropped <= versions_from_) return Status::Ok();
  HistoryEntryReader reader;
  HistoryUpdate update;
  std::string key;
  for (it->Seek(sequence_key(std::max(history_from_, versions_from_) + 1)); it->Valid(); it->Next()) {
    std::string_view k(it->key().data(), it->key().size());
    if (k.size() < 8 || protocol::get_be<std::uint64_t>(k) > last_dropped) break;
    if (!reader.open(k, std::string_view(it->value().data(), it->value().size()))) {
      return Status::Corruption("history trim: corrupt CHP history entry");
    }
    while (reader.next(&update)) {
      if (update.entry.sequence <= versions_from_) continue;
      assign_version_key(&key, update.key, update.entry.sequence);
      batch.Delete(versions, slice(key));
    }
    if (!reader.done()) return Status::Corruption("history trim: corrupt CHP history entry");
  }
  if (!it->status().ok()) return from_rocks(it->status(), "history trim");
  return Status::Ok();
}

Status ChpStore::key_history(std::string_view key, std::size_t limit, std::vector<ChpVersion>* out) {
  out->clear();
  if (!keeps_versions()) return Status::Refused("per-key history is off (zstored --chp-key-history)");
  auto* versions = db_->handle(Column::kChpVersions);
  if (limit == 0 || history_from_ == UINT64_MAX) return Status::Ok();
  const std::string prefix = encode_version_prefix(key);
  // Not below the history's start: the versions trimmed with it may still
  // be tombstones, which a walk past the last live one would step over.
  const std::string lower = encode_version_key(key, std::max(history_from_, versions_from_) + 1);
  rocksdb::Slice lower_slice = slice(lower);
  rocksdb::ReadOptions ro;
  ro.iterate_lower_bound = &lower_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->db()->NewIterator(ro, versions));
  for (it->SeekForPrev(slice(encode_version_key(key, UINT64_MAX))); it->Valid() && out->size() < limit; it->Prev()) {
    std::string_view k(it->key().data(), it->key().size());
    std::string_view found;
    std::uint64_t sequence = 0;
    if (!k.starts_with(prefix)) break;
    ChpVersion v;
    if (!decode_version_key(k, &found, &sequence) || found != key ||
        !decode_version_value(std::string_view(it->value().data(), it->value().size()), &v) ||
        v.entry.sequence != sequence) {
      return Status::Corruption("corrupt CHP version entry");
    }
    out->push_back(std::move(v));
  }
  if (!it->status().ok()) return from_rocks(it->status(), "key history read");
  return Status::Ok();
}

void ChpStore::release_idle_trim_reader() {
  if (trim_reader_.holds()) trim_reader_.release_if_stale(KeptIterator::Clock::now());
}

std::unique_ptr<ChpSnapshotCursor> ChpStore::history_after(std::uint64_t after) {
  if (after < history_from_ || history_max_ == 0 || db_->handle(Column::kChpHistory) == nullptr) return nullptr;
  return history_cursor(db_, after, last_sequence_);
}

std::unique_ptr<ChpSnapshotCursor> ChpStore::history_updates_after(std::uint64_t after) {
  if (after < history_from_ || history_max_ == 0 || db_->handle(Column::kChpHistory) == nullptr) return nullptr;
  return history_cursor(db_, after, last_sequence_, {}, HistoryValues::kOmitted);
}

bool ChpStore::keeps_history() const { return history_max_ > 0 && db_->handle(Column::kChpHistory) != nullptr; }

std::unique_ptr<ChpSnapshotCursor> ChpStore::resume_after(std::uint64_t after, std::string_view prefix) {
  if (after > last_sequence_ || !contains_sequence(epochs_, after)) return nullptr;
  if (after < history_from_ || !keeps_history()) return nullptr;
  return history_cursor(db_, after, last_sequence_, prefix);
}

}  // namespace zstore::storage
