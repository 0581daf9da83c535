#include "storage/chp_history.h"

#include <algorithm>

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include "protocol/byte_order.h"
#include "storage/chp_store.h"
#include "storage/database.h"
#include "storage/packed_values.h"
#include "storage/slice.h"

namespace zstore::storage {

namespace {

class HistoryCursor final : public ChpSnapshotCursor {
 public:
  HistoryCursor(Database* db, std::uint64_t after, std::uint64_t last, std::string_view prefix)
      : db_(db), snapshot_(db->db()->GetSnapshot()), after_(after), last_(last), prefix_(prefix) {
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
      it_->Seek(slice(start));  // the entry holding after + 1, or the first after it
    }
  }
  ~HistoryCursor() override {
    it_.reset();
    db_->db()->ReleaseSnapshot(snapshot_);
  }

  std::uint64_t sequence() const override { return last_; }

  bool next(ChpRecord* out) override {
    paused_ = false;
    std::string_view update;
    for (std::size_t skipped = 0; status_.ok(); ++skipped) {
      if (skipped == kMaxSkipped) {
        paused_ = true;
        return false;
      }
      if (!next_update(&update)) break;
      if (!decode_history(update, out)) return corrupt();
      if (out->entry.sequence <= after_) continue;  // in the block holding after + 1, before it
      if (out->key.starts_with(prefix_)) return true;
    }
    if (status_.ok() && !it_->status().ok()) status_ = Status::Error("history read: " + it_->status().ToString());
    return false;
  }

  bool paused() const override { return paused_; }
  Status status() const override { return status_; }

 private:
  // The next update's bytes, moving to the next entry when the current one
  // is used up (its views stay valid until then); false at the end or on
  // an error (then in status_).
  bool next_update(std::string_view* update) {
    while (left_ == 0) {
      if (advance_) it_->Next();
      advance_ = false;  // set again below only on a valid entry: no Next() past the end
      if (!it_->Valid()) return false;
      advance_ = true;
      if (!start_entry(std::string_view(it_->key().data(), it_->key().size()),
                       std::string_view(it_->value().data(), it_->value().size()))) {
        return corrupt();
      }
    }
    --left_;
    if (!single_) return block_.next(update) || corrupt();
    *update = entry_;
    return true;
  }

  bool start_entry(std::string_view key, std::string_view value) {
    single_ = key.size() == 8;
    if (single_) {
      entry_ = value;
      left_ = 1;
      return true;
    }
    if (key.size() != 9 || key[8] != kHistoryBlockTag || !block_.open(value)) return false;
    left_ = block_.left();
    return true;
  }

  bool corrupt() {
    status_ = Status::Error("corrupt CHP history entry");
    return false;
  }

  Database* db_;
  const rocksdb::Snapshot* snapshot_;
  std::uint64_t after_;
  std::uint64_t last_;
  std::string prefix_;
  std::unique_ptr<rocksdb::Iterator> it_;
  bool advance_ = false;     // the iterator is at the entry last started
  bool single_ = false;      // that entry is one update
  std::uint64_t left_ = 0;   // updates left in it
  std::string_view entry_;   // its value, when it is one update
  PackedValues block_;       // its updates, when it is a block
  Status status_ = Status::Ok();
  bool paused_ = false;
  static constexpr std::size_t kMaxSkipped = 4096;
};

}  // namespace

void HistoryWriter::add(rocksdb::WriteBatch& batch, Database* db, std::uint64_t sequence, std::uint64_t written_ms,
                        std::string_view key, const ChpEntryPieces& entry) {
  std::size_t size = 12 + key.size();
  for (std::size_t i = 0; i < ChpEntryPieces::kCount; ++i) size += entry.pieces()[i].size();
  if (count_ > 0 && (count_ >= max_updates_ || block_.size() + 4 + size > kMaxHistoryBlockBytes)) finish(batch, db);
  if (count_ == 0) block_.assign(4, '\0');  // the count, written by finish()
  char header[16];  // length, written_ms, key length
  protocol::store_be<std::uint32_t>(header, static_cast<std::uint32_t>(size));
  protocol::store_be<std::uint64_t>(header + 4, written_ms);
  protocol::store_be<std::uint32_t>(header + 12, static_cast<std::uint32_t>(key.size()));
  block_.append(header, 4);
  last_offset_ = block_.size();
  block_.append(header + 4, 12);
  block_.append(key);
  for (std::size_t i = 0; i < ChpEntryPieces::kCount; ++i) block_.append(entry.pieces()[i]);
  ++count_;
  last_sequence_ = sequence;
}

void HistoryWriter::finish(rocksdb::WriteBatch& batch, Database* db) {
  if (count_ == 0) return;
  char key[9];
  protocol::store_be<std::uint64_t>(key, last_sequence_);
  key[8] = kHistoryBlockTag;
  auto* column = db->handle(Column::kChpHistory);
  if (count_ == 1) {
    batch.Put(column, rocksdb::Slice(key, 8),
              rocksdb::Slice(block_.data() + last_offset_, block_.size() - last_offset_));
  } else {
    protocol::store_be<std::uint32_t>(block_.data(), count_);
    batch.Put(column, rocksdb::Slice(key, 9), slice(block_));
  }
  count_ = 0;
  block_.clear();
}

bool history_entry_info(std::string_view key, std::string_view value, bool newest, HistoryEntryInfo* out) {
  if (key.size() == 8) {  // one update; a time of 0 (or none) is unknown
    *out = {1, protocol::get_be<std::uint64_t>(key), value.size() >= 8 ? protocol::get_be<std::uint64_t>(value) : 0};
    return true;
  }
  PackedValues block;
  if (key.size() != 9 || key[8] != kHistoryBlockTag || !block.open(value)) return false;
  *out = {block.left(), protocol::get_be<std::uint64_t>(key), 0};
  if (!newest) return true;
  std::string_view update;
  while (block.next(&update)) {
    if (update.size() < 8) return false;
    out->newest_ms = std::max(out->newest_ms, protocol::get_be<std::uint64_t>(update));
  }
  return block.done();
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
