// ChpStore's open (chp_store.h): its counters, epochs and history bounds
// read back from meta, the key count kept once, and where chp_versions
// starts (or the versions dropped when key history is off).
#include <memory>
#include <string>

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include "protocol/byte_order.h"
#include "storage/chp/chp_store.h"
#include "storage/db/rocks_status.h"
#include "storage/db/slice.h"

namespace zstore::storage {

Status ChpStore::Open(Database* db, std::unique_ptr<ChpStore>* out, std::uint64_t history_entries,
                      std::size_t key_index_bytes, bool key_history) {
  std::unique_ptr<ChpStore> store(new ChpStore(db, key_index_bytes));
  store->history_max_ = history_entries;
  store->key_history_ = key_history;
  Status s = store->load_meta();
  if (s.ok()) s = store->count_keys_once();
  if (s.ok()) s = store->load_versions_from();
  if (s.ok()) s = store->start_key_index();
  if (s.ok()) s = store->outcomes_.load(db);
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

}  // namespace zstore::storage
