// DafkaLog key and value encodings and its record cursor.
#include <rocksdb/db.h>
#include <rocksdb/iterator.h>

#include "protocol/byte_order.h"
#include "storage/dafka_log.h"
#include "storage/dafka_log_internal.h"

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

  // The iterator moves on at the call after, so the value read stays where
  // RocksDB holds it while the caller uses the view.
  bool next_view(DafkaRecordView* out) override {
    if (remaining_ == 0 || !status_.ok()) return false;
    if (advance_) {
      it_->Next();
      advance_ = false;
    }
    if (!it_->Valid()) {
      if (!it_->status().ok()) status_ = Status::Error("record read: " + it_->status().ToString());
      return false;
    }
    std::string_view key = view(it_->key());
    if (key.size() != prefix_.size() + 8 || !key.starts_with(prefix_)) return false;
    std::uint64_t offset = protocol::get_be<std::uint64_t>(key.substr(prefix_.size()));
    if (offset - from_ >= limit_) return false;  // past from + count (no overflow)
    *out = {parsed_.first, parsed_.second, offset, view(it_->value())};
    --remaining_;
    advance_ = true;
    return true;
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
  std::unique_ptr<rocksdb::Iterator> it_;
  bool advance_ = false;  // the iterator is at the record last returned
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

std::unique_ptr<DafkaCursor> make_cursor(Database* db, std::string prefix, std::uint64_t from, std::uint64_t count) {
  return std::make_unique<RocksDafkaCursor>(db, std::move(prefix), from, count);
}

}  // namespace dafka_internal

bool DafkaCursor::next_view(DafkaRecordView* out) {
  if (!next(&copy_)) return false;
  *out = {copy_.subject, copy_.partition, copy_.offset, copy_.content};
  return true;
}

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
