#include "storage/chp/chp_store.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <unordered_map>

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include "protocol/byte_order.h"
#include "storage/db/bytewise.h"
#include "storage/chp/chp_history.h"
#include "storage/chp/chp_map_batch.h"
#include "storage/chp/chp_priors.h"
#include "storage/db/rocks_status.h"
#include "storage/db/slice.h"

namespace zstore::storage {
namespace {

// Replaces a reused batch by an empty one when it ends holding more than
// max_bytes, so its buffer does not stay that large.
struct DropIfLarge {
  rocksdb::WriteBatch& batch;
  std::size_t max_bytes;
  ~DropIfLarge() {
    if (batch.GetDataSize() > max_bytes) batch = rocksdb::WriteBatch();
  }
};

// The keys of a batch as RocksDB slices and their key-index fingerprints.
template <typename Item>
void name_keys(std::span<const Item> items, const ChpKeyIndex& index, std::vector<rocksdb::Slice>* names,
               std::vector<std::uint64_t>* fps) {
  names->reserve(items.size());
  fps->reserve(items.size());
  for (const Item& item : items) {
    names->push_back(slice(item.key));
    fps->push_back(index.fingerprint(item.key));
  }
}

// Gives w the sequence after *seq, or keeps its own when above it (a
// replica writes its active's); *seq becomes w's.
Status take_sequence(ChpWrite& w, std::uint64_t* seq) {
  if (w.sequence == 0) {
    w.sequence = ++*seq;
    return Status::Ok();
  }
  if (w.sequence <= *seq) {
    return Status::InvalidArgument("explicit sequence " + std::to_string(w.sequence) + " is not above " +
                                   std::to_string(*seq));
  }
  *seq = w.sequence;
  return Status::Ok();
}

}  // namespace

bool ChpStore::keeps_versions() const {
  return key_history_ && history_max_ > 0 && db_->handle(Column::kChpVersions) != nullptr;
}

// The update's version (chp_versions.h), beside its history entry.
void ChpStore::put_version(rocksdb::WriteBatch& batch, const ChpWrite& w) {
  assign_version_key(&version_key_, w.key, w.sequence);
  char ms[8];
  protocol::store_be<std::uint64_t>(ms, w.written_ms);
  ChpEntryPieces entry(w.sequence, w.expires_at_ms, w.uuid, w.properties, w.value);
  rocksdb::Slice parts[1 + ChpEntryPieces::kCount];
  parts[0] = rocksdb::Slice(ms, sizeof ms);
  for (std::size_t i = 0; i < ChpEntryPieces::kCount; ++i) parts[1 + i] = slice(entry.pieces()[i]);
  rocksdb::Slice key = slice(version_key_);
  batch.Put(db_->handle(Column::kChpVersions), rocksdb::SliceParts(&key, 1),
            rocksdb::SliceParts(parts, 1 + ChpEntryPieces::kCount));
}

void ChpStore::put_keys(rocksdb::WriteBatch& batch, std::uint64_t keys) {
  std::string bytes;
  protocol::put_be<std::uint64_t>(bytes, keys);
  batch.Put(db_->handle(Column::kMeta), slice(kMetaChpKeys), bytes);
}

void ChpStore::put_meta(rocksdb::WriteBatch& batch, std::uint64_t last, const ChpEpochs& epochs,
                        std::uint64_t history_from, std::uint64_t history_count) {
  auto* meta = db_->handle(Column::kMeta);
  std::string bytes;
  protocol::put_be<std::uint64_t>(bytes, last);
  batch.Put(meta, slice(kMetaChpLastSequence), bytes);
  batch.Put(meta, slice(kMetaChpEpochs), format_epochs(epochs));
  bytes.clear();
  protocol::put_be<std::uint64_t>(bytes, history_from);
  batch.Put(meta, slice(kMetaChpHistoryFrom), bytes);
  bytes.clear();
  protocol::put_be<std::uint64_t>(bytes, history_count);
  batch.Put(meta, slice(kMetaChpHistoryCount), bytes);
}

// The counters one apply() moves: last sequence, history count, live keys.
void ChpStore::put_apply_meta(rocksdb::WriteBatch& batch, std::uint64_t last, std::uint64_t history_count,
                              std::uint64_t keys) {
  std::string bytes;
  protocol::put_be<std::uint64_t>(bytes, last);
  batch.Put(db_->handle(Column::kMeta), slice(kMetaChpLastSequence), bytes);
  bytes.clear();
  protocol::put_be<std::uint64_t>(bytes, history_count);
  batch.Put(db_->handle(Column::kMeta), slice(kMetaChpHistoryCount), bytes);
  put_keys(batch, keys);
}

Status ChpStore::apply(std::span<ChpWrite> writes, WriteSync sync) {
  if (writes.empty()) return Status::Ok();
  adopt_scanned_index();
  rocksdb::WriteBatch& batch = apply_batch_;
  batch.Clear();
  DropIfLarge drop_if_large{batch, kMaxKeptBatchBytes};  // however apply() returns
  auto* map = db_->handle(Column::kChpMap);
  auto* expiry = db_->handle(Column::kChpExpiry);
  std::uint64_t seq = last_sequence_;
  std::uint64_t keys = live_keys();
  std::uint64_t lowest = std::numeric_limits<std::uint64_t>::max();
  std::vector<rocksdb::Slice> names;
  std::vector<std::uint64_t> fps;
  name_keys(std::span<const ChpWrite>(writes), key_index_, &names, &fps);
  BatchPriors priors(db_, key_index_, names, fps);
  HistoryWriter history(history_slack(), &history_block_);
  const bool versions = keeps_versions();
  // A failure hands every write back the sequence it came with.
  given_sequences_.clear();
  for (const auto& w : writes) given_sequences_.push_back(w.sequence);
  auto refuse = [&](Status s) {
    for (std::size_t i = 0; i < writes.size(); ++i) writes[i].sequence = given_sequences_[i];
    return s;
  };
  for (std::size_t i = 0; i < writes.size(); ++i) {
    auto& w = writes[i];
    if (Status s = take_sequence(w, &seq); !s.ok()) return refuse(s);
    BatchPriors::Prior old;
    if (Status s = priors.before(i, &old); !s.ok()) return refuse(s);
    if (old.expires_at_ms != 0) batch.Delete(expiry, encode_expiry_key(old.expires_at_ms, w.key));
    if (history_max_ > 0) history.add(batch, db_, w);
    if (versions) put_version(batch, w);
    bool exists = !w.value.empty();
    keys = keys + (exists ? 1 : 0) - (old.exists ? 1 : 0);
    priors.written(i, {exists, exists ? w.expires_at_ms : 0});
    if (exists && w.expires_at_ms != 0) {
      batch.Put(expiry, encode_expiry_key(w.expires_at_ms, w.key), rocksdb::Slice());
      lowest = std::min(lowest, w.expires_at_ms);
    }
  }
  history.finish(batch, db_);
  put_map_in_key_order(batch, map, writes);
  std::uint64_t count = history_max_ > 0 ? history_count_ + writes.size() : 0;
  put_apply_meta(batch, seq, count, keys);
  outcomes_.put(batch, db_, writes, remember_every_outcome_);
  Status s = db_->write(batch, sync);
  if (!s.ok()) return refuse(s);
  outcomes_.committed();
  last_sequence_ = seq;
  epochs_.back().last = seq;
  history_count_ = count;
  live_keys_ = keys;
  prior_reads_ += priors.reads();
  remember(fps, writes);
  ascending_since_clear_ = false;
  trim_history_after_write(batch.GetDataSize());
  sweep_floor_ms_ = std::min(sweep_floor_ms_, lowest);
  return Status::Ok();
}

Status ChpStore::remember_outcomes(std::span<const ChpWrite> writes) {
  rocksdb::WriteBatch batch;
  outcomes_.put(batch, db_, writes, true);
  if (batch.Count() == 0) return Status::Ok();
  if (Status s = db_->write(batch); !s.ok()) return s;
  outcomes_.committed();
  return Status::Ok();
}

Status ChpStore::get(std::string_view key, ChpEntry* entry, bool* found) {
  std::string bytes;
  rocksdb::Status s = db_->db()->Get(rocksdb::ReadOptions(), db_->handle(Column::kChpMap), slice(key), &bytes);
  *found = false;
  if (s.IsNotFound()) return Status::Ok();
  if (!s.ok()) return from_rocks(s, "read failed");
  if (!decode_chp_entry(bytes, entry)) return Status::Corruption("corrupt CHP entry");
  *found = true;
  return Status::Ok();
}

// Starts at sweep_floor_ms_, below which the index holds nothing live, so
// the entries this sweep or an earlier one deleted (tombstones until a
// compaction) are not walked again: a sweep costs O(keys due).
Status ChpStore::due_expiries(std::uint64_t now_ms, std::size_t limit, std::vector<Due>* out) {
  out->clear();
  std::string upper;
  rocksdb::Slice upper_slice;
  rocksdb::ReadOptions ro;
  if (now_ms != std::numeric_limits<std::uint64_t>::max()) {  // else everything is due
    protocol::put_be<std::uint64_t>(upper, now_ms + 1);
    upper_slice = rocksdb::Slice(upper);
    ro.iterate_upper_bound = &upper_slice;
  }
  if (limit == 0) return Status::Ok();
  std::unique_ptr<rocksdb::Iterator> it(db_->db()->NewIterator(ro, db_->handle(Column::kChpExpiry)));
  std::string floor;
  protocol::put_be<std::uint64_t>(floor, sweep_floor_ms_);
  rocksdb::WriteBatch stale;
  std::uint64_t first_live = 0;
  for (it->Seek(floor); it->Valid() && out->size() < limit; it->Next()) {
    std::uint64_t at = 0;
    std::string_view key;
    if (!decode_expiry_key(std::string_view(it->key().data(), it->key().size()), &at, &key)) {
      stale.Delete(db_->handle(Column::kChpExpiry), it->key());
      continue;
    }
    ChpEntry entry;
    bool found = false;
    Status s = get(key, &entry, &found);
    if (!s.ok()) return s;
    if (found && entry.expires_at_ms == at) {
      if (out->empty()) first_live = at;
      out->push_back({std::string(key), at});
    } else {  // left by an older zstore, which did not remove index entries in apply()
      stale.Delete(db_->handle(Column::kChpExpiry), it->key());
    }
  }
  if (!it->status().ok()) return from_rocks(it->status(), "expiry scan failed");
  if (stale.Count() > 0) {
    Status s = db_->write(stale);
    if (!s.ok()) return s;
  }
  if (!out->empty()) {
    sweep_floor_ms_ = first_live;
  } else if (now_ms != std::numeric_limits<std::uint64_t>::max()) {
    sweep_floor_ms_ = std::max(sweep_floor_ms_, now_ms + 1);  // nothing live at or below now
  }
  return Status::Ok();
}

// One range delete per family, from the empty key (the smallest) to the
// last one, in one batch.
Status ChpStore::clear() {
  trim_reader_.reset();  // its view would show the history cleared here
  rocksdb::WriteBatch batch;
  for (Column c : {Column::kChpMap, Column::kChpExpiry, Column::kChpHistory, Column::kChpVersions}) {
    if (db_->handle(c) == nullptr) continue;
    std::unique_ptr<rocksdb::Iterator> it(db_->db()->NewIterator(rocksdb::ReadOptions(), db_->handle(c)));
    it->SeekToLast();
    if (!it->Valid()) {
      if (!it->status().ok()) return from_rocks(it->status(), "clear");
      continue;
    }
    batch.DeleteRange(db_->handle(c), rocksdb::Slice(), it->key());
    batch.Delete(db_->handle(c), it->key());
  }
  put_meta(batch, last_sequence_, epochs_, UINT64_MAX, 0);
  put_keys(batch, 0);
  if (Status s = db_->write(batch); !s.ok()) return s;
  history_from_ = UINT64_MAX;  // nothing to hand out until adopt()
  history_count_ = 0;
  live_keys_ = 0;
  key_scan_.reset();       // what it read is gone
  key_index_.clear(true);  // the map is empty: the index knows every key again
  publish_key_index_state();
  ascending_since_clear_ = true;
  loaded_any_ = false;
  last_loaded_.clear();
  return Status::Ok();
}

Status ChpStore::load(std::span<const ChpRecord> records) {
  adopt_scanned_index();
  rocksdb::WriteBatch batch;
  std::uint64_t lowest = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t keys = live_keys();
  std::vector<rocksdb::Slice> names;
  std::vector<std::uint64_t> fps;
  name_keys(records, key_index_, &names, &fps);
  bool all_new = all_new_after_clear(records);  // a snapshot after clear(): no lookups
  BatchPriors priors(db_, key_index_, names, fps, all_new);
  auto* expiry = db_->handle(Column::kChpExpiry);
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    BatchPriors::Prior old;
    if (Status s = priors.before(i, &old); !s.ok()) return s;
    if (old.expires_at_ms != 0) batch.Delete(expiry, encode_expiry_key(old.expires_at_ms, r.key));
    if (!old.exists) ++keys;
    priors.written(i, {true, r.entry.expires_at_ms});
    put_entry(batch, db_->handle(Column::kChpMap), r.key,
              ChpEntryPieces(r.entry.sequence, r.entry.expires_at_ms, r.entry.uuid, r.entry.properties, r.entry.value));
    if (r.entry.expires_at_ms != 0) {
      batch.Put(expiry, encode_expiry_key(r.entry.expires_at_ms, r.key), rocksdb::Slice());
      lowest = std::min(lowest, r.entry.expires_at_ms);
    }
  }
  put_keys(batch, keys);
  Status s = db_->write(batch);
  if (!s.ok()) return s;
  live_keys_ = keys;
  prior_reads_ += priors.reads();
  remember(fps, records);
  sweep_floor_ms_ = std::min(sweep_floor_ms_, lowest);
  ascending_since_clear_ = all_new;
  if (all_new && !records.empty()) {
    loaded_any_ = true;
    last_loaded_ = records.back().key;
  }
  return s;
}

// Whether records are in ascending key order, above every key loaded since
// clear() and nothing else was written since: then none is in the map.
bool ChpStore::all_new_after_clear(std::span<const ChpRecord> records) const {
  if (!ascending_since_clear_) return false;
  const std::string* previous = loaded_any_ ? &last_loaded_ : nullptr;
  for (const auto& r : records) {
    if (previous != nullptr && !(*previous < r.key)) return false;
    previous = &r.key;
  }
  return true;
}

}  // namespace zstore::storage
