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

// Adds key -> the entry's pieces to batch, copying them once, into the batch.
void put_entry(rocksdb::WriteBatch& batch, rocksdb::ColumnFamilyHandle* cf, std::string_view key,
               const ChpEntryPieces& entry) {
  rocksdb::Slice parts[ChpEntryPieces::kCount];
  for (std::size_t i = 0; i < ChpEntryPieces::kCount; ++i) parts[i] = slice(entry.pieces()[i]);
  rocksdb::Slice key_slice = slice(key);
  batch.Put(cf, rocksdb::SliceParts(&key_slice, 1), rocksdb::SliceParts(parts, ChpEntryPieces::kCount));
}

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

// A batch's key with the first 16 bytes loaded as two numbers that order
// as the bytes do (zero-padded), so that most comparisons of a sort are
// two integer compares, with no load through the key's pointer.
struct OrderedKey {
  std::uint64_t high = 0;
  std::uint64_t low = 0;
  std::string_view key;
  std::uint32_t index = 0;  // the write's place in its batch: later wins

  static constexpr std::size_t kPrefix = 16;

  OrderedKey(std::string_view k, std::uint32_t i) : key(k), index(i) {
    char padded[kPrefix] = {};
    std::memcpy(padded, k.data(), std::min(k.size(), kPrefix));
    high = load_ordered(padded);
    low = load_ordered(padded + 8);
  }

  // The order of the keys (compare_bytes), then of their places.
  friend bool operator<(const OrderedKey& a, const OrderedKey& b) {
    if (a.high != b.high) return a.high < b.high;
    if (a.low != b.low) return a.low < b.low;
    int rest = a.rest_vs(b);
    return rest != 0 ? rest < 0 : a.index < b.index;
  }
  bool same_key(const OrderedKey& b) const { return high == b.high && low == b.low && rest_vs(b) == 0; }

  // Equal prefixes: a key of at most kPrefix bytes is then a prefix of
  // the other (its padding zeros match), so length decides; else the bytes
  // past the prefix do.
  int rest_vs(const OrderedKey& b) const {
    if (key.size() <= kPrefix || b.key.size() <= kPrefix) {
      return key.size() == b.key.size() ? 0 : (key.size() < b.key.size() ? -1 : 1);
    }
    return compare_bytes(key.data() + kPrefix, key.size() - kPrefix, b.key.data() + kPrefix, b.key.size() - kPrefix);
  }
};

}  // namespace

// Only each key's last write of the batch goes to the map, in key order
// (a key written twice in one batch costs one memtable insert).
void put_map_in_key_order(rocksdb::WriteBatch& batch, rocksdb::ColumnFamilyHandle* map,
                          std::span<const ChpWrite> writes) {
  std::vector<OrderedKey> order;
  order.reserve(writes.size());
  for (std::uint32_t i = 0; i < writes.size(); ++i) order.emplace_back(writes[i].key, i);
  std::sort(order.begin(), order.end());
  for (std::size_t n = 0; n < order.size(); ++n) {
    if (n + 1 < order.size() && order[n + 1].same_key(order[n])) continue;  // a later write replaces it
    const ChpWrite& w = writes[order[n].index];
    if (w.value.empty()) {
      batch.Delete(map, slice(w.key));
    } else {
      put_entry(batch, map, w.key, ChpEntryPieces(w.sequence, w.expires_at_ms, w.uuid, w.properties, w.value));
    }
  }
}

Status ChpStore::Open(Database* db, std::unique_ptr<ChpStore>* out, std::uint64_t history_entries,
                      std::size_t key_index_bytes, bool key_history) {
  std::unique_ptr<ChpStore> store(new ChpStore(db, key_index_bytes));
  store->history_max_ = history_entries;
  store->key_history_ = key_history;
  Status s = store->load_meta();
  if (s.ok()) s = store->count_keys_once();
  if (s.ok()) s = store->load_versions_from();
  if (s.ok()) s = store->start_key_index();
  if (!s.ok()) return s;
  *out = std::move(store);
  return Status::Ok();
}

namespace {

Status read_u64_meta(Database* db, std::string_view name, std::uint64_t* out, bool* present) {
  std::string bytes;
  Status s = db->get_meta(name, &bytes);
  if (!s.ok()) return s;
  *present = !bytes.empty();
  if (bytes.empty()) return Status::Ok();
  if (bytes.size() != 8) return Status::Corruption("corrupt CHP metadata '" + std::string(name) + "'");
  *out = protocol::get_be<std::uint64_t>(bytes);
  return Status::Ok();
}

}  // namespace

Status ChpStore::load_meta() {
  bool present = false;
  Status s = read_u64_meta(db_, kMetaChpLastSequence, &last_sequence_, &present);
  if (!s.ok()) return s;
  std::string bytes;
  if (s = db_->get_meta(kMetaChpSynced, &bytes); !s.ok()) return s;
  synced_ = bytes != "0";
  if (s = db_->get_meta(kMetaChpEpochs, &bytes); !s.ok()) return s;
  if (bytes.empty()) {
    // Written before epoch lists: one epoch, as far back as its counter.
    std::uint64_t base = (last_sequence_ >> kEpochShift) << kEpochShift;
    epochs_ = {{base, last_sequence_}};
    history_from_ = last_sequence_;
    return Status::Ok();
  }
  auto epochs = parse_epochs(bytes);
  if (!epochs || epochs->empty() || epochs->back().base > last_sequence_) {
    return Status::Corruption("corrupt CHP epoch list");
  }
  epochs_ = std::move(*epochs);
  epochs_.back().last = last_sequence_;
  if (s = read_u64_meta(db_, kMetaChpHistoryFrom, &history_from_, &present); !s.ok()) return s;
  if (!present) history_from_ = last_sequence_;
  return read_u64_meta(db_, kMetaChpHistoryCount, &history_count_, &present);
}

// The key count, from meta; a database written before it was kept is
// counted once (a scan of the map) and the count stored.
Status ChpStore::count_keys_once() {
  std::uint64_t keys = 0;
  bool present = false;
  if (Status s = read_u64_meta(db_, kMetaChpKeys, &keys, &present); !s.ok() || present) {
    live_keys_ = keys;
    return s;
  }
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->db()->NewIterator(ro, db_->handle(Column::kChpMap)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++keys;
  if (!it->status().ok()) return from_rocks(it->status(), "counting the CHP keys");
  rocksdb::WriteBatch batch;
  put_keys(batch, keys);
  if (Status s = db_->write(batch); !s.ok()) return s;
  live_keys_ = keys;
  return Status::Ok();
}

// Where chp_versions starts: stored at the first open that has it. A
// database an older zstore wrote has history without versions up to its
// last sequence; a new one has versions of everything.
// Opened without key_history (writable): drop_versions() instead, so that
// the versions of an earlier "on" are never served after a gap.
Status ChpStore::load_versions_from() {
  bool present = false;
  if (!key_history_ && !db_->options().read_only) return drop_versions();
  if (Status s = read_u64_meta(db_, kMetaChpVersionsFrom, &versions_from_, &present); !s.ok() || present) return s;
  versions_from_ = last_sequence_;
  // A read-only open (zstore-dump) writes nothing; nor is there a family
  // to describe in an older database opened read-only.
  if (db_->options().read_only || db_->handle(Column::kChpVersions) == nullptr) return Status::Ok();
  rocksdb::WriteBatch batch;
  std::string bytes;
  protocol::put_be<std::uint64_t>(bytes, versions_from_);
  batch.Put(db_->handle(Column::kMeta), slice(kMetaChpVersionsFrom), bytes);
  return db_->write(batch);
}

// Every version and chp_versions_from, in one batch: one range delete from
// the smallest key to the last one (nothing written when already empty).
// The next open with key_history starts the versions at its last sequence.
Status ChpStore::drop_versions() {
  versions_from_ = last_sequence_;
  auto* versions = db_->handle(Column::kChpVersions);
  if (versions == nullptr) return Status::Ok();
  std::string from;
  if (Status s = db_->get_meta(kMetaChpVersionsFrom, &from); !s.ok()) return s;
  rocksdb::WriteBatch batch;
  std::unique_ptr<rocksdb::Iterator> it(db_->db()->NewIterator(rocksdb::ReadOptions(), versions));
  it->SeekToLast();
  if (it->Valid()) {
    batch.DeleteRange(versions, rocksdb::Slice(), it->key());
    batch.Delete(versions, it->key());
  } else if (!it->status().ok()) {
    return from_rocks(it->status(), "drop chp_versions");
  }
  if (!from.empty()) batch.Delete(db_->handle(Column::kMeta), slice(kMetaChpVersionsFrom));
  if (batch.Count() == 0) return Status::Ok();
  return db_->write(batch, Database::WriteKind::kReclaims);
}

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

Status ChpStore::apply(std::span<ChpWrite> writes) {
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
    if (w.sequence == 0) {
      w.sequence = ++seq;
    } else if (w.sequence <= seq) {
      return refuse(
          Status::InvalidArgument("explicit sequence " + std::to_string(w.sequence) + " is not above " + std::to_string(seq)));
    } else {
      seq = w.sequence;
    }
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
  Status s = db_->write(batch);
  if (!s.ok()) return refuse(s);
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
  key_scan_.reset();        // what it read is gone
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

Status ChpStore::adopt(std::uint64_t sequence, ChpEpochs epochs) {
  if (epochs.empty() || epochs.back().last != sequence) epochs = {{sequence, sequence}};  // unknown past
  rocksdb::WriteBatch batch;
  put_meta(batch, sequence, epochs, sequence, 0);
  Status s = db_->write_durable(batch);
  if (!s.ok()) return s;
  last_sequence_ = sequence;
  epochs_ = std::move(epochs);
  history_from_ = sequence;
  history_count_ = 0;
  return Status::Ok();
}

Status ChpStore::advance_to(std::uint64_t sequence, ChpEpochs epochs) {
  if (sequence <= last_sequence_) return Status::InvalidArgument("advance_to: sequence not above the last one");
  if (epochs.empty() || epochs.back().last != sequence) {
    epochs = epochs_;
    epochs.push_back({sequence, sequence});
  }
  if (epochs.size() > kMaxEpochs) epochs.erase(epochs.begin(), epochs.end() - static_cast<std::ptrdiff_t>(kMaxEpochs));
  rocksdb::WriteBatch batch;
  put_meta(batch, sequence, epochs, history_from_, history_count_);
  Status s = db_->write_durable(batch);
  if (!s.ok()) return s;
  last_sequence_ = sequence;
  epochs_ = std::move(epochs);
  return Status::Ok();
}

Status ChpStore::begin_epoch(std::uint64_t floor, std::uint64_t now_ms, std::uint64_t salt) {
  std::uint64_t base = std::max({last_sequence_, floor, epoch_clock_base(now_ms, salt)});
  if (base <= epochs_.back().base) base = epochs_.back().base + 1;
  ChpEpochs epochs = epochs_;
  epochs.push_back({base, base});
  if (epochs.size() > kMaxEpochs) epochs.erase(epochs.begin());
  rocksdb::WriteBatch batch;  // no sequence between the old last and base: the history stays complete
  put_meta(batch, base, epochs, history_from_, history_count_);
  Status s = db_->write_durable(batch);
  if (!s.ok()) return s;
  last_sequence_ = base;
  epochs_ = std::move(epochs);
  return Status::Ok();
}

Status ChpStore::start_standalone(bool stopped_cleanly, std::uint64_t now_ms, std::uint64_t salt, bool* began) {
  bool new_map = last_sequence_ == 0 && epochs_.size() == 1;
  *began = new_map || !stopped_cleanly;
  if (!*began) return Status::Ok();
  return begin_epoch(0, now_ms, salt);
}

Status ChpStore::set_synced(bool synced) {
  rocksdb::WriteBatch batch;
  batch.Put(db_->handle(Column::kMeta), slice(kMetaChpSynced), synced ? "1" : "0");
  Status s = db_->write_durable(batch);
  if (s.ok()) synced_ = synced;
  return s;
}

}  // namespace zstore::storage
