// ChpStore's snapshot cursor (chp_store.h): a scan of the map, or of one key
// prefix, at a RocksDB snapshot, so a client's snapshot is one consistent
// state however long it takes to send.
#include <limits>
#include <memory>
#include <string>

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>

#include "storage/chp/chp_store.h"
#include "storage/db/rocks_status.h"
#include "storage/db/slice.h"

namespace zstore::storage {
namespace {

// The smallest string greater than every string starting with prefix, or
// empty when there is none (prefix of all 0xff bytes, or empty prefix).
std::string prefix_successor(std::string_view prefix) {
  std::string s(prefix);
  while (!s.empty()) {
    auto& c = reinterpret_cast<unsigned char&>(s.back());
    if (c != 0xff) {
      ++c;
      return s;
    }
    s.pop_back();
  }
  return s;
}

class RocksSnapshotCursor final : public ChpSnapshotCursor {
 public:
  RocksSnapshotCursor(Database* db, std::string_view prefix, std::uint64_t sequence)
      : db_(db),
        snapshot_(db->db()->GetSnapshot()),
        prefix_(prefix),
        upper_(prefix_successor(prefix)),
        sequence_(sequence) {
    rocksdb::ReadOptions ro;
    ro.snapshot = snapshot_;
    ro.fill_cache = false;        // a full scan must not evict the hot set
    ro.readahead_size = 2 << 20;  // a scan reads whole files: few large reads
    if (!upper_.empty()) {
      upper_slice_ = rocksdb::Slice(upper_);
      ro.iterate_upper_bound = &upper_slice_;
    }
    it_.reset(db->db()->NewIterator(ro, db->handle(Column::kChpMap)));
    it_->Seek(slice(prefix_));
  }

  ~RocksSnapshotCursor() override {
    it_.reset();
    db_->db()->ReleaseSnapshot(snapshot_);
  }

  std::uint64_t sequence() const override { return sequence_; }

  // The iterator moves past the record last returned only now, so that
  // record's views stay valid until this call.
  bool next_view(ChpRecordView* out) override {
    if (status_.ok() && returned_) it_->Next();
    returned_ = false;
    if (!status_.ok() || !it_->Valid()) {
      if (status_.ok() && !it_->status().ok()) status_ = from_rocks(it_->status(), "snapshot read");
      return false;
    }
    out->key = std::string_view(it_->key().data(), it_->key().size());
    if (!decode_chp_entry(std::string_view(it_->value().data(), it_->value().size()), &out->entry)) {
      status_ = Status::Corruption("corrupt CHP entry for a key of " + std::to_string(out->key.size()) + " bytes");
      return false;
    }
    returned_ = true;
    return true;
  }

  bool next(ChpRecord* out) override {
    ChpRecordView v;
    if (!next_view(&v)) return false;
    out->key.assign(v.key);  // assign(): a reused record keeps its buffers
    out->entry.sequence = v.entry.sequence;
    out->entry.expires_at_ms = v.entry.expires_at_ms;
    out->entry.uuid.assign(v.entry.uuid);
    out->entry.properties.assign(v.entry.properties);
    out->entry.value.assign(v.entry.value);
    out->written_ms = 0;
    return true;
  }

  Status status() const override { return status_; }

 private:
  Database* db_;
  const rocksdb::Snapshot* snapshot_;
  std::string prefix_;
  std::string upper_;
  rocksdb::Slice upper_slice_;
  std::unique_ptr<rocksdb::Iterator> it_;
  std::uint64_t sequence_;
  Status status_ = Status::Ok();
  bool returned_ = false;  // a record was returned: step past it first
};

}  // namespace

bool ChpSnapshotCursor::next_view(ChpRecordView* out) {
  if (!next(&copied_)) return false;
  out->key = copied_.key;
  out->entry = {copied_.entry.sequence, copied_.entry.expires_at_ms, copied_.entry.uuid, copied_.entry.properties,
                copied_.entry.value};
  out->written_ms = copied_.written_ms;
  out->superseded = copied_.superseded;
  return true;
}

std::unique_ptr<ChpSnapshotCursor> ChpStore::snapshot(std::string_view prefix) {
  return std::make_unique<RocksSnapshotCursor>(db_, prefix, last_sequence_);
}

std::uint64_t ChpStore::approximate_bytes(std::string_view prefix) {
  std::string upper = prefix_successor(prefix);
  if (upper.empty()) return std::numeric_limits<std::uint64_t>::max();
  rocksdb::Range range(slice(prefix), slice(upper));
  rocksdb::SizeApproximationOptions options;
  options.include_memtables = true;
  options.include_files = true;
  std::uint64_t bytes = 0;
  rocksdb::Status s = db_->db()->GetApproximateSizes(options, db_->handle(Column::kChpMap), &range, 1, &bytes);
  return s.ok() ? bytes : std::numeric_limits<std::uint64_t>::max();
}

}  // namespace zstore::storage
