// DafkaLog key and value encodings and its record cursor.
#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include "protocol/byte_order.h"
#include "storage/dafka/dafka_log.h"
#include "storage/dafka/dafka_log_internal.h"
#include "storage/db/packed_values.h"
#include "storage/db/rocks_status.h"

namespace zstore::storage {
namespace dafka_internal {
namespace {

void put_short(std::string& out, std::string_view s) {
  out.push_back(static_cast<char>(s.size() & 0xff));
  out.append(s.substr(0, 255));
}

class RocksDafkaCursor final : public DafkaCursor {
 public:
  RocksDafkaCursor(Database* db, std::string prefix, std::uint64_t from, std::uint64_t count)
      : prefix_(std::move(prefix)), upper_(partition_end(prefix_)), from_(from), remaining_(count), limit_(count) {
    rocksdb::ReadOptions ro;
    ro.fill_cache = false;
    upper_slice_ = rocksdb::Slice(upper_);
    ro.iterate_upper_bound = &upper_slice_;
    it_.reset(db->db()->NewIterator(ro, db->handle(Column::kDafkaRecords)));
    it_->Seek(slice(prefix_ + encode_u64(from)));
    parse_dafka_partition_prefix(prefix_, &parsed_);
  }

  bool next(DafkaRecord* out) override {
    DafkaRecordView v;
    if (!next_view(&v)) return false;
    out->subject.assign(v.subject);  // assign(): a reused record keeps its buffers
    out->partition.assign(v.partition);
    out->offset = v.offset;
    out->content.assign(v.content);
    return true;
  }

  // The iterator moves on at the call after a run's last record, so the
  // value read stays where RocksDB holds it while the caller uses the view.
  bool next_view(DafkaRecordView* out) override {
    while (remaining_ != 0 && status_.ok()) {
      if (left_ == 0 && !load_entry()) return false;
      std::uint64_t offset = next_offset_++;
      --left_;
      std::string_view content;
      if (!take_content(&content)) {
        status_ = Status::Corruption("corrupt Dafka record run");
        return false;
      }
      if (offset < from_) continue;    // in the run holding from, before it
      if (offset - from_ >= limit_) {  // past from + count (no overflow)
        remaining_ = 0;
        return false;
      }
      *out = {parsed_.first, parsed_.second, offset, content};
      --remaining_;
      return true;
    }
    return false;
  }

  Status status() const override { return status_; }

 private:
  std::string prefix_;
  std::string upper_;
  rocksdb::Slice upper_slice_;
  std::uint64_t from_;
  std::uint64_t remaining_;
  std::uint64_t limit_;
  DafkaPartitionKey parsed_;
  // Moves to the next entry of the partition and starts reading it: false
  // at the end (or on an error, then in status_).
  bool load_entry() {
    if (advance_) it_->Next();
    advance_ = false;  // set again below only on a valid entry: no Next() past the end
    if (!it_->Valid()) {
      if (!it_->status().ok()) status_ = from_rocks(it_->status(), "record read");
      return false;
    }
    advance_ = true;
    std::string_view key = view(it_->key());
    std::string_view value = view(it_->value());
    if (!key.starts_with(prefix_)) return false;
    if (key.size() < prefix_.size() + 8) return corrupt_key();
    std::uint64_t last = protocol::get_be<std::uint64_t>(key.substr(prefix_.size()));
    if (key.size() == prefix_.size() + 8) {  // one record
      next_offset_ = last;
      left_ = 1;
      single_ = true;
      entry_ = value;
      return true;
    }
    if (key.size() != prefix_.size() + 9 || key.back() != kRunTag || !run_.open(value)) return corrupt_key();
    std::uint32_t count = run_.left();
    if (count - 1 > last) return corrupt_key();
    next_offset_ = last - (count - 1);
    left_ = count;
    single_ = false;
    return true;
  }

  // The next record's content from the current entry; false when the run's
  // bytes do not hold it.
  bool take_content(std::string_view* content) {
    if (!single_) return run_.next(content);
    *content = entry_;
    return true;
  }

  bool corrupt_key() {
    status_ = Status::Corruption("corrupt Dafka record entry");
    return false;
  }

  std::unique_ptr<rocksdb::Iterator> it_;
  bool advance_ = false;           // the iterator is at the entry last read
  std::string_view entry_;         // the current entry's value, when it is one record
  PackedValues run_;               // its records, when it is a run
  std::uint64_t next_offset_ = 0;  // offset of the next record in it
  std::uint64_t left_ = 0;         // records left in it
  bool single_ = false;            // the entry is one record (its value is the content)
  Status status_ = Status::Ok();
};

}  // namespace

std::string encode_u64(std::uint64_t v) {
  std::string s;
  protocol::put_be<std::uint64_t>(s, v);
  return s;
}

// Raising the length byte of the partition name would sort elsewhere, so
// append a byte beyond any offset encoding instead.
std::string partition_end(std::string_view prefix) {
  std::string s(prefix);
  s.append(9, '\xff');
  return s;
}

std::size_t run_end(std::span<const std::uint64_t> offsets, std::span<const std::string_view> contents,
                    std::size_t first) {
  std::size_t bytes = 4 + 4 + contents[first].size();
  std::size_t end = first + 1;
  while (end < offsets.size() && offsets[end] == offsets[end - 1] + 1) {
    bytes += 4 + contents[end].size();
    if (bytes > kMaxRunBytes) break;
    ++end;
  }
  return end;
}

void RunWriter::put(rocksdb::WriteBatch& batch, rocksdb::ColumnFamilyHandle* column, std::string_view prefix,
                    std::span<const std::uint64_t> offsets, std::span<const std::string_view> contents) {
  char key_bytes[9];
  protocol::store_be<std::uint64_t>(key_bytes, offsets.back());
  key_bytes[8] = kRunTag;
  rocksdb::Slice key[2] = {slice(prefix), rocksdb::Slice(key_bytes, 8)};
  if (offsets.size() == 1) {
    rocksdb::Slice value = slice(contents[0]);
    batch.Put(column, rocksdb::SliceParts(key, 2), rocksdb::SliceParts(&value, 1));
    return;
  }
  key[1] = rocksdb::Slice(key_bytes, 9);
  headers_.resize(4 * (1 + contents.size()));  // sized first: the slices below point into it
  protocol::store_be<std::uint32_t>(headers_.data(), static_cast<std::uint32_t>(contents.size()));
  parts_.clear();
  parts_.emplace_back(headers_.data(), 4);
  for (std::size_t i = 0; i < contents.size(); ++i) {
    char* length = headers_.data() + 4 * (1 + i);
    protocol::store_be<std::uint32_t>(length, static_cast<std::uint32_t>(contents[i].size()));
    parts_.emplace_back(length, 4);
    parts_.push_back(slice(contents[i]));
  }
  batch.Put(column, rocksdb::SliceParts(key, 2), rocksdb::SliceParts(parts_.data(), static_cast<int>(parts_.size())));
}

std::unique_ptr<DafkaCursor> make_cursor(Database* db, std::string prefix, std::uint64_t from, std::uint64_t count) {
  return std::make_unique<RocksDafkaCursor>(db, std::move(prefix), from, count);
}

}  // namespace dafka_internal

bool DafkaCursor::next_view(DafkaRecordView* out) {
  if (!next(&copy_)) return false;
  *out = {copy_.subject, copy_.partition, copy_.offset, copy_.content};
  return true;
}

namespace {

// prefix | offset u64 BE (a run's key without its tag).
bool parse_record_key(std::string_view key, DafkaPartitionKey* partition, std::uint64_t* offset) {
  if (key.size() < 8 || !parse_dafka_partition_prefix(key.substr(0, key.size() - 8), partition)) return false;
  *offset = protocol::get_be<std::uint64_t>(key.substr(key.size() - 8));
  return true;
}

}  // namespace

bool parse_dafka_partition_prefix(std::string_view key, DafkaPartitionKey* out) {
  if (key.empty()) return false;
  std::size_t n = static_cast<unsigned char>(key[0]);
  if (key.size() < 1 + n + 1) return false;
  std::size_t m = static_cast<unsigned char>(key[1 + n]);
  if (key.size() != 2 + n + m) return false;
  out->first.assign(key.substr(1, n));
  out->second.assign(key.substr(2 + n, m));
  return true;
}

bool parse_dafka_record_key(std::string_view key, DafkaPartitionKey* partition, std::uint64_t* last_offset) {
  // The prefix is self-delimiting: a record whose offset ends in the tag's
  // byte does not parse as a run.
  bool run = !key.empty() && key.back() == dafka_internal::kRunTag;
  return (run && parse_record_key(key.substr(0, key.size() - 1), partition, last_offset)) ||
         parse_record_key(key, partition, last_offset);
}

std::string dafka_partition_prefix(std::string_view subject, std::string_view partition) {
  std::string s;
  s.reserve(2 + subject.size() + partition.size());
  dafka_internal::put_short(s, subject);
  dafka_internal::put_short(s, partition);
  return s;
}

std::string dafka_record_key(std::string_view subject, std::string_view partition, std::uint64_t offset) {
  return dafka_partition_prefix(subject, partition) + dafka_internal::encode_u64(offset);
}

std::string encode_dafka_head(const DafkaHeadValue& v) {
  std::string s;
  s.reserve(40);
  for (std::uint64_t x : {v.next, v.floor, v.records, v.bytes, static_cast<std::uint64_t>(v.last_write_ms)}) {
    protocol::put_be<std::uint64_t>(s, x);
  }
  return s;
}

bool decode_dafka_head(std::string_view bytes, DafkaHeadValue* out) {
  *out = DafkaHeadValue{};
  if (bytes.size() == 8) {
    out->next = protocol::get_be<std::uint64_t>(bytes);
    out->has_counters = false;
    return true;
  }
  if (bytes.size() != 40) return false;
  out->next = protocol::get_be<std::uint64_t>(bytes);
  out->floor = protocol::get_be<std::uint64_t>(bytes.substr(8));
  out->records = protocol::get_be<std::uint64_t>(bytes.substr(16));
  out->bytes = protocol::get_be<std::uint64_t>(bytes.substr(24));
  out->last_write_ms = static_cast<std::int64_t>(protocol::get_be<std::uint64_t>(bytes.substr(32)));
  return out->floor <= out->next;
}

}  // namespace zstore::storage
