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

constexpr char kFullUpdate = 0;
constexpr char kSetReference = 1;

// The key of a block of updates (layout 2 or 3), not of one update.
bool is_block_key(std::string_view key) {
  return key.size() == 9 && (key[8] == kHistoryBlockTag || key[8] == kHistoryRefBlockTag);
}

class HistoryCursor final : public ChpSnapshotCursor {
 public:
  HistoryCursor(Database* db, std::uint64_t after, std::uint64_t last, std::string_view prefix, HistoryValues values)
      : db_(db), snapshot_(db->db()->GetSnapshot()), after_(after), last_(last), prefix_(prefix), values_(values) {
    ro_.snapshot = snapshot_;
    ro_.fill_cache = false;
    it_.reset(db->db()->NewIterator(ro_, db->handle(Column::kChpHistory)));
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
    std::string_view bytes;
    HistoryUpdate update;
    for (std::size_t skipped = 0; status_.ok(); ++skipped) {
      if (skipped == kMaxSkipped) {
        paused_ = true;
        return false;
      }
      if (!next_update(&bytes)) break;
      if (!decode_history_update(bytes, tagged_, &update)) return corrupt();
      if (update.entry.sequence <= after_) continue;  // in the block holding after + 1, before it
      if (!update.key.starts_with(prefix_)) continue;
      if (fill(update, out)) return true;
    }
    if (status_.ok() && !it_->status().ok()) status_ = Status::Error("history read: " + it_->status().ToString());
    return false;
  }

  bool paused() const override { return paused_; }
  Status status() const override { return status_; }
  bool updates() const override { return true; }

 private:
  // *out from one update; false when it is to be skipped (a set
  // overwritten later) or on an error (then in status_).
  bool fill(const HistoryUpdate& update, ChpRecord* out) {
    out->key.assign(update.key);
    out->written_ms = update.written_ms;
    out->value_omitted = false;
    out->superseded = false;
    if (!update.reference) return assign(update.entry, out);
    if (values_ == HistoryValues::kOmitted) {
      out->value_omitted = true;
      return assign(ChpEntryView{update.entry.sequence, 0, update.entry.uuid, {}, {}}, out);
    }
    rocksdb::Status s = db_->db()->Get(ro_, db_->handle(Column::kChpMap), slice(update.key), &current_);
    if (s.IsNotFound()) {  // deleted or expired later: that update follows
      out->superseded = true;
      return assign(ChpEntryView{update.entry.sequence, 0, {}, {}, {}}, out);
    }
    if (!s.ok()) {
      status_ = Status::Error("history read of chp_map: " + s.ToString());
      return false;
    }
    ChpEntryView now;
    if (!decode_chp_entry(std::string_view(current_.data(), current_.size()), &now)) return corrupt();
    if (now.sequence > update.entry.sequence) return false;  // overwritten later: that update follows
    if (now.sequence < update.entry.sequence) {
      status_ = Status::Error("corrupt CHP history: it refers to sequence " + std::to_string(update.entry.sequence) +
                              " of a key chp_map holds at " + std::to_string(now.sequence));
      return false;
    }
    return assign(now, out);
  }

  static bool assign(const ChpEntryView& entry, ChpRecord* out) {
    assign_chp_entry(entry, &out->entry);
    return true;
  }

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
    tagged_ = false;
    if (single_) {
      entry_ = value;
      left_ = 1;
      return true;
    }
    if (!is_block_key(key) || !block_.open(value)) return false;
    tagged_ = key[8] == kHistoryRefBlockTag;
    left_ = block_.left();
    return true;
  }

  bool corrupt() {
    status_ = Status::Error("corrupt CHP history entry");
    return false;
  }

  Database* db_;
  const rocksdb::Snapshot* snapshot_;
  rocksdb::ReadOptions ro_;
  std::uint64_t after_;
  std::uint64_t last_;
  std::string prefix_;
  HistoryValues values_;
  std::unique_ptr<rocksdb::Iterator> it_;
  bool advance_ = false;     // the iterator is at the entry last started
  bool single_ = false;      // that entry is one update
  bool tagged_ = false;      // its updates carry a kind byte (layout 3)
  std::uint64_t left_ = 0;   // updates left in it
  std::string_view entry_;   // its value, when it is one update
  PackedValues block_;       // its updates, when it is a block
  rocksdb::PinnableSlice current_;  // a referenced key's chp_map entry
  Status status_ = Status::Ok();
  bool paused_ = false;
  static constexpr std::size_t kMaxSkipped = 4096;
};

}  // namespace

void HistoryWriter::add(rocksdb::WriteBatch& batch, Database* db, std::uint64_t sequence, std::uint64_t written_ms,
                        std::string_view key, const ChpEntryPieces& entry) {
  const bool reference = !entry.value().empty();
  std::size_t size = 13 + key.size();
  if (reference) {
    size += 9 + entry.uuid().size();
  } else {
    for (std::size_t i = 0; i < ChpEntryPieces::kCount; ++i) size += entry.pieces()[i].size();
  }
  if (count_ > 0 && (count_ >= max_updates_ || block_.size() + 4 + size > kMaxHistoryBlockBytes)) finish(batch, db);
  if (count_ == 0) block_.assign(4, '\0');  // the count, written by finish()
  char header[17];  // length, written_ms, key length
  protocol::store_be<std::uint32_t>(header, static_cast<std::uint32_t>(size));
  protocol::store_be<std::uint64_t>(header + 4, written_ms);
  protocol::store_be<std::uint32_t>(header + 12, static_cast<std::uint32_t>(key.size()));
  block_.append(header, 16);
  block_.append(key);
  if (reference) {
    header[0] = kSetReference;
    protocol::store_be<std::uint64_t>(header + 1, sequence);
    header[9] = static_cast<char>(entry.uuid().size());
    block_.append(header, 10);
    block_.append(entry.uuid());
  } else {
    block_.push_back(kFullUpdate);
    for (std::size_t i = 0; i < ChpEntryPieces::kCount; ++i) block_.append(entry.pieces()[i]);
  }
  ++count_;
  last_sequence_ = sequence;
}

void HistoryWriter::finish(rocksdb::WriteBatch& batch, Database* db) {
  if (count_ == 0) return;
  char key[9];
  protocol::store_be<std::uint64_t>(key, last_sequence_);
  key[8] = kHistoryRefBlockTag;
  protocol::store_be<std::uint32_t>(block_.data(), count_);
  batch.Put(db->handle(Column::kChpHistory), rocksdb::Slice(key, 9), slice(block_));
  count_ = 0;
  block_.clear();
}

bool history_entry_info(std::string_view key, std::string_view value, bool newest, HistoryEntryInfo* out) {
  if (key.size() == 8) {  // one update; a time of 0 (or none) is unknown
    *out = {1, protocol::get_be<std::uint64_t>(key), value.size() >= 8 ? protocol::get_be<std::uint64_t>(value) : 0};
    return true;
  }
  PackedValues block;
  if (!is_block_key(key) || !block.open(value)) return false;
  *out = {block.left(), protocol::get_be<std::uint64_t>(key), 0};
  if (!newest) return true;
  std::string_view update;
  while (block.next(&update)) {  // every layout starts an update with its written_ms
    if (update.size() < 8) return false;
    out->newest_ms = std::max(out->newest_ms, protocol::get_be<std::uint64_t>(update));
  }
  return block.done();
}

bool decode_history_update(std::string_view bytes, bool tagged, HistoryUpdate* out) {
  if (bytes.size() < 12) return false;
  out->written_ms = protocol::get_be<std::uint64_t>(bytes);
  std::uint32_t len = protocol::get_be<std::uint32_t>(bytes.substr(8));
  if (bytes.size() - 12 < len) return false;
  out->key = bytes.substr(12, len);
  bytes.remove_prefix(12 + len);
  out->reference = false;
  if (tagged) {
    if (bytes.empty()) return false;
    char kind = bytes.front();
    bytes.remove_prefix(1);
    if (kind == kSetReference) {
      if (bytes.size() < 9 || bytes.size() - 9 != static_cast<unsigned char>(bytes[8])) return false;
      out->reference = true;
      out->entry = ChpEntryView{protocol::get_be<std::uint64_t>(bytes), 0, bytes.substr(9), {}, {}};
      return true;
    }
    if (kind != kFullUpdate) return false;
  }
  return decode_chp_entry(bytes, &out->entry);
}

std::unique_ptr<ChpSnapshotCursor> history_cursor(Database* db, std::uint64_t after, std::uint64_t last,
                                                  std::string_view prefix, HistoryValues values) {
  return std::make_unique<HistoryCursor>(db, after, last, prefix, values);
}

}  // namespace zstore::storage
