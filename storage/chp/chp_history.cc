#include "storage/chp/chp_history.h"

#include <algorithm>
#include <optional>

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include "protocol/byte_order.h"
#include "storage/chp/chp_store.h"
#include "storage/db/database.h"
#include "storage/db/packed_values.h"
#include "storage/db/rocks_status.h"
#include "storage/db/slice.h"
#include "storage/db/varint.h"

namespace zstore::storage {

namespace {

constexpr char kFullUpdate = 0;
constexpr char kSetReference = 1;

// The key of a block of updates (layout 2, 3 or 4), not of one update.
bool is_block_key(std::string_view key) {
  return key.size() == 9 &&
         (key[8] == kHistoryBlockTag || key[8] == kHistoryRefBlockTag || key[8] == kHistoryCompactBlockTag);
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
    HistoryUpdate update;
    for (std::size_t skipped = 0; status_.ok(); ++skipped) {
      if (skipped == kMaxSkipped) {
        paused_ = true;
        return false;
      }
      if (!next_update(&update)) break;
      if (update.entry.sequence <= after_) continue;  // in the block holding after + 1, before it
      if (!update.key.starts_with(prefix_)) continue;
      if (fill(update, out)) return true;
    }
    if (status_.ok() && !it_->status().ok()) status_ = from_rocks(it_->status(), "history read");
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
      status_ = from_rocks(s, "history read of chp_map");
      return false;
    }
    ChpEntryView now;
    if (!decode_chp_entry(std::string_view(current_.data(), current_.size()), &now)) return corrupt();
    if (now.sequence > update.entry.sequence) return false;  // overwritten later: that update follows
    if (now.sequence < update.entry.sequence) {
      status_ =
          Status::Corruption("corrupt CHP history: it refers to sequence " + std::to_string(update.entry.sequence) +
                             " of a key chp_map holds at " + std::to_string(now.sequence));
      return false;
    }
    return assign(now, out);
  }

  static bool assign(const ChpEntryView& entry, ChpRecord* out) {
    assign_chp_entry(entry, &out->entry);
    return true;
  }

  // The next update, moving to the next entry when the current one is
  // used up (its views stay valid until then); false at the end or on an
  // error (then in status_).
  bool next_update(HistoryUpdate* update) {
    while (reader_.left() == 0) {
      if (advance_) {
        if (!reader_.done()) return corrupt();
        it_->Next();
      }
      advance_ = false;  // set again below only on a valid entry: no Next() past the end
      if (!it_->Valid()) return false;
      advance_ = true;
      if (!reader_.open(std::string_view(it_->key().data(), it_->key().size()),
                        std::string_view(it_->value().data(), it_->value().size()))) {
        return corrupt();
      }
    }
    return reader_.next(update) || corrupt();
  }

  bool corrupt() {
    status_ = Status::Corruption("corrupt CHP history entry");
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
  bool advance_ = false;            // the iterator is at the entry last started
  HistoryEntryReader reader_;       // its updates
  rocksdb::PinnableSlice current_;  // a referenced key's chp_map entry
  Status status_ = Status::Ok();
  bool paused_ = false;
  static constexpr std::size_t kMaxSkipped = 4096;
};

// Decodes an update of a layout-3 block (tagged) or of a layout 1 or 2
// entry; false when malformed.
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

}  // namespace

void HistoryWriter::add(rocksdb::WriteBatch& batch, Database* db, const ChpWrite& w) {
  const bool reference = !w.value.empty();
  std::optional<ChpEntryPieces> entry;  // a delete's or expiry's whole chp_map entry
  std::size_t entry_size = 0;
  if (!reference) {
    entry.emplace(w.sequence, w.expires_at_ms, w.uuid, w.properties, w.value);
    for (std::size_t i = 0; i < ChpEntryPieces::kCount; ++i) entry_size += entry->pieces()[i].size();
  }
  // The kind and the varints: the steps, the key's length, an entry's.
  char numbers[1 + 4 * kMaxVarintBytes];
  std::size_t size = sizeof numbers + w.key.size() + entry_size;
  if (count_ > 0 && (count_ >= max_updates_ || block_.size() + size > kMaxHistoryBlockBytes)) finish(batch, db);
  if (count_ == 0) {
    block_.assign(4, '\0');  // the count, written by finish()
    last_sequence_ = 0;
    last_ms_ = 0;
  }
  std::size_t n = 0;
  numbers[n++] = reference ? kSetReference : kFullUpdate;
  n += encode_varint(numbers + n, w.sequence - last_sequence_);
  n += encode_varint(numbers + n, zigzag_delta(last_ms_, w.written_ms));
  n += encode_varint(numbers + n, w.key.size());
  block_.append(numbers, n);
  block_.append(w.key);
  if (!reference) {
    block_.append(numbers, encode_varint(numbers, entry_size));
    for (std::size_t i = 0; i < ChpEntryPieces::kCount; ++i) block_.append(entry->pieces()[i]);
  }
  ++count_;
  last_sequence_ = w.sequence;
  last_ms_ = w.written_ms;
}

void HistoryWriter::finish(rocksdb::WriteBatch& batch, Database* db) {
  if (count_ == 0) return;
  char key[9];
  protocol::store_be<std::uint64_t>(key, last_sequence_);
  key[8] = kHistoryCompactBlockTag;
  protocol::store_be<std::uint32_t>(block_.data(), count_);
  batch.Put(db->handle(Column::kChpHistory), rocksdb::Slice(key, 9), slice(block_));
  count_ = 0;
  block_.clear();
}

bool HistoryEntryReader::open(std::string_view key, std::string_view value) {
  broken_ = false;
  if (key.size() == 8) {  // layout 1: one update
    layout_ = Layout::kSingle;
    last_ = protocol::get_be<std::uint64_t>(key);
    rest_ = value;
    left_ = 1;
    return true;
  }
  if (!is_block_key(key)) return false;
  last_ = protocol::get_be<std::uint64_t>(key);
  if (key[8] != kHistoryCompactBlockTag) {
    layout_ = key[8] == kHistoryRefBlockTag ? Layout::kTagged : Layout::kPacked;
    if (!packed_.open(value)) return false;
    left_ = packed_.left();
    return true;
  }
  layout_ = Layout::kCompact;
  if (value.size() < 4) return false;
  left_ = protocol::get_be<std::uint32_t>(value);
  rest_ = value.substr(4);
  sequence_ = 0;
  ms_ = 0;
  return left_ > 0;
}

bool HistoryEntryReader::next(HistoryUpdate* out) {
  if (left_ == 0) return false;
  std::string_view bytes;
  switch (layout_) {
    case Layout::kCompact:
      if (!next_compact(out)) {
        broken_ = true;
        return false;
      }
      --left_;
      return true;
    case Layout::kSingle:
      bytes = rest_;
      rest_ = {};
      break;
    case Layout::kPacked:
    case Layout::kTagged:
      if (!packed_.next(&bytes)) {
        broken_ = true;
        return false;
      }
      break;
  }
  --left_;
  if (decode_history_update(bytes, layout_ == Layout::kTagged, out)) return true;
  broken_ = true;
  return false;
}

bool HistoryEntryReader::next_compact(HistoryUpdate* out) {
  if (rest_.empty()) return false;
  char kind = rest_.front();
  rest_.remove_prefix(1);
  std::uint64_t step = 0, ms = 0, key_size = 0;
  if (!get_varint(&rest_, &step) || step == 0 || !get_varint(&rest_, &ms) || !get_varint(&rest_, &key_size) ||
      key_size > rest_.size()) {
    return false;
  }
  sequence_ += step;
  ms_ = apply_zigzag_delta(ms_, ms);
  out->written_ms = ms_;
  out->key = rest_.substr(0, key_size);
  rest_.remove_prefix(key_size);
  if (kind == kSetReference) {
    out->reference = true;
    out->entry = ChpEntryView{sequence_, 0, {}, {}, {}};
    return true;
  }
  std::uint64_t entry_size = 0;
  if (kind != kFullUpdate || !get_varint(&rest_, &entry_size) || entry_size > rest_.size()) return false;
  out->reference = false;
  if (!decode_chp_entry(rest_.substr(0, entry_size), &out->entry) || out->entry.sequence != sequence_) return false;
  rest_.remove_prefix(entry_size);
  return true;
}

bool HistoryEntryReader::done() const {
  if (left_ != 0 || broken_) return false;
  switch (layout_) {
    case Layout::kSingle:
      return true;
    case Layout::kPacked:
    case Layout::kTagged:
      return packed_.done();
    case Layout::kCompact:
      return rest_.empty() && sequence_ == last_;
  }
  return false;
}

bool history_entry_info(std::string_view key, std::string_view value, bool newest, HistoryEntryInfo* out) {
  if (key.size() == 8) {  // one update; a time of 0 (or none) is unknown
    *out = {1, protocol::get_be<std::uint64_t>(key), value.size() >= 8 ? protocol::get_be<std::uint64_t>(value) : 0};
    return true;
  }
  HistoryEntryReader reader;
  if (!reader.open(key, value)) return false;
  *out = {reader.left(), protocol::get_be<std::uint64_t>(key), 0};
  if (!newest) return true;
  HistoryUpdate update;
  while (reader.next(&update)) out->newest_ms = std::max(out->newest_ms, update.written_ms);
  return reader.done();
}

std::unique_ptr<ChpSnapshotCursor> history_cursor(Database* db, std::uint64_t after, std::uint64_t last,
                                                  std::string_view prefix, HistoryValues values) {
  return std::make_unique<HistoryCursor>(db, after, last, prefix, values);
}

}  // namespace zstore::storage
