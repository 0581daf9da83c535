#include "storage/chp_history.h"

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include "protocol/byte_order.h"
#include "storage/chp_store.h"
#include "storage/database.h"
#include "storage/slice.h"

namespace zstore::storage {

namespace {

class HistoryCursor final : public ChpSnapshotCursor {
 public:
  HistoryCursor(Database* db, std::uint64_t after, std::uint64_t last, std::string_view prefix)
      : db_(db), snapshot_(db->db()->GetSnapshot()), last_(last), prefix_(prefix) {
    rocksdb::ReadOptions ro;
    ro.snapshot = snapshot_;
    ro.fill_cache = false;
    it_.reset(db->db()->NewIterator(ro, db->handle(Column::kChpHistory)));
    std::string start;
    protocol::put_be<std::uint64_t>(start, after + 1);
    if (after == UINT64_MAX) {
      it_->SeekToLast();
      if (it_->Valid()) it_->Next();  // nothing is after the largest sequence
    } else {
      it_->Seek(slice(start));
    }
  }
  ~HistoryCursor() override {
    it_.reset();
    db_->db()->ReleaseSnapshot(snapshot_);
  }

  std::uint64_t sequence() const override { return last_; }

  bool next(ChpRecord* out) override {
    paused_ = false;
    for (std::size_t skipped = 0; status_.ok() && it_->Valid(); ++skipped) {
      if (skipped == kMaxSkipped) {
        paused_ = true;
        return false;
      }
      std::string_view value(it_->value().data(), it_->value().size());
      if (it_->key().size() != 8 || !decode_history(value, out)) {
        status_ = Status::Error("corrupt CHP history entry");
        return false;
      }
      it_->Next();
      if (out->key.starts_with(prefix_)) return true;
    }
    if (status_.ok() && !it_->status().ok()) status_ = Status::Error("history read: " + it_->status().ToString());
    return false;
  }

  bool paused() const override { return paused_; }
  Status status() const override { return status_; }

 private:
  Database* db_;
  const rocksdb::Snapshot* snapshot_;
  std::uint64_t last_;
  std::string prefix_;
  std::unique_ptr<rocksdb::Iterator> it_;
  Status status_ = Status::Ok();
  bool paused_ = false;
  static constexpr std::size_t kMaxSkipped = 4096;
};

}  // namespace

void put_history(rocksdb::WriteBatch& batch, Database* db, std::uint64_t sequence, std::uint64_t written_ms,
                 std::string_view key, const ChpEntryPieces& entry) {
  char seq[8];
  char header[12];  // written_ms, key length
  protocol::store_be<std::uint64_t>(seq, sequence);
  protocol::store_be<std::uint64_t>(header, written_ms);
  protocol::store_be<std::uint32_t>(header + 8, static_cast<std::uint32_t>(key.size()));
  rocksdb::Slice parts[2 + ChpEntryPieces::kCount];
  parts[0] = rocksdb::Slice(header, sizeof(header));
  parts[1] = slice(key);
  for (std::size_t i = 0; i < ChpEntryPieces::kCount; ++i) parts[2 + i] = slice(entry.pieces()[i]);
  rocksdb::Slice key_slice(seq, sizeof(seq));
  batch.Put(db->handle(Column::kChpHistory), rocksdb::SliceParts(&key_slice, 1),
            rocksdb::SliceParts(parts, 2 + ChpEntryPieces::kCount));
}

bool decode_history(std::string_view bytes, ChpRecord* out) {
  if (bytes.size() < 12) return false;
  out->written_ms = protocol::get_be<std::uint64_t>(bytes.substr(0, 8));
  std::uint32_t len = protocol::get_be<std::uint32_t>(bytes.substr(8, 4));
  if (bytes.size() - 12 < len) return false;
  out->key.assign(bytes.substr(12, len));
  return decode_chp_entry(bytes.substr(12 + len), &out->entry);
}

std::unique_ptr<ChpSnapshotCursor> history_cursor(Database* db, std::uint64_t after, std::uint64_t last,
                                                  std::string_view prefix) {
  return std::make_unique<HistoryCursor>(db, after, last, prefix);
}

}  // namespace zstore::storage
