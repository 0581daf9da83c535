// ChpStore's key index (chp_key_index.h): how it starts, learns each
// write, and adopts the index a restart's scan built (chp_key_scan.h); and
// the keys' current versions that conditional writes are judged against.
#include <cstring>
#include <memory>

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>

#include "storage/chp/chp_store.h"
#include "storage/db/rocks_status.h"
#include "storage/db/slice.h"

namespace zstore::storage {

// An empty map: the key index starts complete (it will see every key).
Status ChpStore::start_key_index() {
  std::unique_ptr<rocksdb::Iterator> it(db_->db()->NewIterator(rocksdb::ReadOptions(), db_->handle(Column::kChpMap)));
  it->SeekToFirst();
  if (!it->status().ok()) return from_rocks(it->status(), "reading the CHP map");
  key_index_.clear(!it->Valid());
  publish_key_index_state();
  return Status::Ok();
}

// After a write succeeded: the key index (and a scan still building one)
// learns each key's new state, in write order (the last write of a key wins).
void ChpStore::remember(std::span<const std::uint64_t> fps, std::span<const ChpWrite> writes) {
  std::vector<ChpKeyIndex::Change> changes(writes.size());
  for (std::size_t i = 0; i < writes.size(); ++i) {
    bool exists = !writes[i].value.empty();
    changes[i] = {fps[i], exists, exists ? writes[i].expires_at_ms : 0, exists ? writes[i].sequence : 0};
  }
  remember_changes(changes);
}

void ChpStore::remember(std::span<const std::uint64_t> fps, std::span<const ChpRecord> records) {
  std::vector<ChpKeyIndex::Change> changes(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    changes[i] = {fps[i], true, records[i].entry.expires_at_ms, records[i].entry.sequence};
  }
  remember_changes(changes);
}

void ChpStore::remember_changes(std::span<const ChpKeyIndex::Change> changes) {
  key_index_.apply(changes);
  if (key_scan_) key_scan_->changed(changes);
  publish_key_index_state();
}

void ChpStore::publish_key_index_state() {
  key_index_bytes_.store(key_index_.bytes(), std::memory_order_relaxed);
  key_index_complete_.store(key_index_.complete(), std::memory_order_relaxed);
}

void ChpStore::build_key_index_in_background() {
  if (key_index_.complete() || key_scan_) return;
  key_scan_ = std::make_unique<ChpKeyScan>(db_, key_index_, key_index_.max_bytes());
}

// The scan's index replaces ours once it has caught up (O(1): a move); a
// scan that failed or gave up is dropped and writes read unknown keys.
void ChpStore::adopt_scanned_index() {
  if (!key_scan_) return;
  if (auto built = key_scan_->take()) {
    key_index_ = std::move(*built);
    publish_key_index_state();
    key_scan_.reset();
  } else if (key_scan_->failed()) {
    key_scan_.reset();
  }
}

void ChpKeyVersion::set_uuid(std::string_view uuid) {
  uuid_size = uuid.size() <= kMaxUuid ? uuid.size() : kMaxUuid + 1;
  if (uuid.size() <= kMaxUuid) std::memcpy(uuid_.data(), uuid.data(), uuid.size());
}

// A key the complete key index does not know is absent, and one it holds
// at the expected sequence is as the index says: neither is read.
Status ChpStore::current_versions(std::span<const std::string_view> keys, std::span<const std::uint64_t> expected,
                                  std::vector<ChpKeyVersion>* out) {
  out->assign(keys.size(), ChpKeyVersion{});
  std::vector<rocksdb::Slice> unknown;
  std::vector<std::size_t> slots;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    std::uint64_t expires = 0;
    std::uint64_t sequence = 0;
    bool known = key_index_.find(key_index_.fingerprint(keys[i]), &expires, &sequence);
    if (!known && key_index_.complete()) continue;
    if (known && sequence != 0 && i < expected.size() && sequence == expected[i]) {
      ChpKeyVersion& v = (*out)[i];
      v.found = true;
      v.sequence = sequence;
      v.expires_at_ms = expires;
      continue;
    }
    unknown.push_back(slice(keys[i]));
    slots.push_back(i);
  }
  if (unknown.empty()) return Status::Ok();
  std::vector<rocksdb::PinnableSlice> values(unknown.size());
  std::vector<rocksdb::Status> statuses(unknown.size());
  db_->db()->MultiGet(rocksdb::ReadOptions(), db_->handle(Column::kChpMap), unknown.size(), unknown.data(),
                      values.data(), statuses.data());
  for (std::size_t j = 0; j < unknown.size(); ++j) {
    if (statuses[j].IsNotFound()) continue;
    if (!statuses[j].ok()) return from_rocks(statuses[j], "read failed");
    ChpEntryView entry;  // views into the pinned value: nothing copied
    if (!decode_chp_entry(std::string_view(values[j].data(), values[j].size()), &entry)) {
      return Status::Corruption("corrupt CHP entry");
    }
    ChpKeyVersion& v = (*out)[slots[j]];
    v.found = true;
    v.sequence = entry.sequence;
    v.expires_at_ms = entry.expires_at_ms;
    v.set_uuid(entry.uuid);
  }
  return Status::Ok();
}

}  // namespace zstore::storage
