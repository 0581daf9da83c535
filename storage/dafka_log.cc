#include "storage/dafka_log.h"

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include <algorithm>

#include "protocol/byte_order.h"

namespace zstore::storage {
namespace {

rocksdb::Slice slice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }
std::string_view view(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }

void put_short(std::string& out, std::string_view s) {
  out.push_back(static_cast<char>(s.size() & 0xff));
  out.append(s.substr(0, 255));
}

// Splits a partition prefix (as in kDafkaHeads) into subject and partition.
bool parse_prefix(std::string_view key, DafkaPartitionKey* out) {
  if (key.empty()) return false;
  std::size_t n = static_cast<unsigned char>(key[0]);
  if (key.size() < 1 + n + 1) return false;
  std::size_t m = static_cast<unsigned char>(key[1 + n]);
  if (key.size() != 2 + n + m) return false;
  out->first.assign(key.substr(1, n));
  out->second.assign(key.substr(2 + n, m));
  return true;
}

std::string encode_u64(std::uint64_t v) {
  std::string s;
  protocol::put_be<std::uint64_t>(s, v);
  return s;
}

// The smallest key above every key of the partition: its prefix with the
// length byte of the partition name raised would sort elsewhere, so append
// a byte beyond any offset encoding instead (offset keys are prefix + 8 bytes).
std::string partition_end(std::string_view prefix) {
  std::string s(prefix);
  s.append(9, '\xff');
  return s;
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
    parse_prefix(prefix_, &parsed_);
  }

  bool next(DafkaRecord* out) override {
    if (remaining_ == 0 || !status_.ok()) return false;
    if (!it_->Valid()) {
      if (!it_->status().ok()) status_ = Status::Error("record read: " + it_->status().ToString());
      return false;
    }
    std::string_view key = view(it_->key());
    if (key.size() != prefix_.size() + 8 || !key.starts_with(prefix_)) return false;
    std::uint64_t offset = protocol::get_be<std::uint64_t>(key.substr(prefix_.size()));
    if (offset - from_ >= limit_) return false;  // past from + count (no overflow)
    out->subject.assign(parsed_.first);  // assign(): a reused record keeps its buffers
    out->partition.assign(parsed_.second);
    out->offset = offset;
    out->content.assign(it_->value().data(), it_->value().size());
    --remaining_;
    it_->Next();
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
  Status status_ = Status::Ok();
};

}  // namespace

bool parse_dafka_partition_prefix(std::string_view key, DafkaPartitionKey* out) { return parse_prefix(key, out); }

std::string dafka_partition_prefix(std::string_view subject, std::string_view partition) {
  std::string s;
  s.reserve(2 + subject.size() + partition.size());
  put_short(s, subject);
  put_short(s, partition);
  return s;
}

std::string dafka_record_key(std::string_view subject, std::string_view partition, std::uint64_t offset) {
  return dafka_partition_prefix(subject, partition) + encode_u64(offset);
}

Status DafkaLog::Open(Database* db, std::unique_ptr<DafkaLog>* out, std::uint64_t max_ahead) {
  std::unique_ptr<DafkaLog> log(new DafkaLog(db, max_ahead));
  Status s = log->load();
  if (!s.ok()) return s;
  *out = std::move(log);
  return Status::Ok();
}

Status DafkaLog::load() {
  std::unique_ptr<rocksdb::Iterator> it(db_->db()->NewIterator(rocksdb::ReadOptions(), db_->handle(Column::kDafkaHeads)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    DafkaPartitionKey key;
    if (!parse_prefix(view(it->key()), &key) || it->value().size() != 8) {
      return Status::Error("corrupt Dafka head entry");
    }
    PartitionState state;
    state.next = protocol::get_be<std::uint64_t>(view(it->value()));
    Status s = load_beyond(key, &state);
    if (!s.ok()) return s;
    partitions_.emplace(std::move(key), std::move(state));
  }
  if (!it->status().ok()) return Status::Error("Dafka heads read: " + it->status().ToString());
  partition_count_ = partitions_.size();
  return Status::Ok();
}

Status DafkaLog::load_beyond(const DafkaPartitionKey& key, PartitionState* state) {
  auto cursor = read(key.first, key.second, state->next, ~std::uint64_t{0} - state->next);
  DafkaRecord r;
  while (cursor->next(&r)) state->beyond.insert(r.offset);
  return cursor->status();
}

const DafkaLog::PartitionState* DafkaLog::find(std::string_view subject, std::string_view partition) const {
  auto it = partitions_.find(DafkaPartitionOrder::View(subject, partition));
  return it == partitions_.end() ? nullptr : &it->second;
}

std::optional<std::uint64_t> DafkaLog::head(std::string_view subject, std::string_view partition) const {
  const PartitionState* p = find(subject, partition);
  if (!p || p->next == 0) return std::nullopt;
  return p->next - 1;
}

bool DafkaLog::known(std::string_view subject, std::string_view partition) const {
  return find(subject, partition) != nullptr;
}

std::optional<std::uint64_t> DafkaLog::first_after_gap(std::string_view subject, std::string_view partition) const {
  const PartitionState* p = find(subject, partition);
  if (!p || p->beyond.empty()) return std::nullopt;
  return *p->beyond.begin();
}

namespace {

// The offsets of one partition that one append() stores, ascending (records
// of a partition mostly arrive in offset order: push_back).
struct AddedOffsets {
  std::string_view subject;
  std::string_view partition;
  std::string prefix;  // the partition's key prefix
  std::vector<std::uint64_t> offsets;
  std::uint64_t next = 0;  // the new head + 1, once computed

  bool contains(std::uint64_t offset) const {
    return !offsets.empty() && offset <= offsets.back() && std::binary_search(offsets.begin(), offsets.end(), offset);
  }
  void insert(std::uint64_t offset) {
    if (offsets.empty() || offsets.back() < offset) {
      offsets.push_back(offset);
    } else {
      offsets.insert(std::lower_bound(offsets.begin(), offsets.end(), offset), offset);
    }
  }
};

// The entry of (subject, partition) in added, created if missing. A batch
// touches few partitions: a linear search beats a map.
AddedOffsets& added_for(std::vector<AddedOffsets>& added, std::string_view subject, std::string_view partition) {
  for (auto& a : added) {
    if (a.partition == partition && a.subject == subject) return a;
  }
  added.push_back({subject, partition, dafka_partition_prefix(subject, partition), {}, 0});
  return added.back();
}

}  // namespace

Status DafkaLog::append(std::span<const DafkaRecord> records, std::vector<DafkaAppend>* outcomes) {
  outcomes->assign(records.size(), DafkaAppend::kDuplicate);
  std::vector<AddedOffsets> added;
  rocksdb::WriteBatch batch;
  auto* column = db_->handle(Column::kDafkaRecords);
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    AddedOffsets& mine = added_for(added, r.subject, r.partition);
    const PartitionState* p = find(r.subject, r.partition);
    std::uint64_t next = p ? p->next : 0;
    if (r.offset < next || (p && p->beyond.contains(r.offset)) || mine.contains(r.offset)) continue;
    if (r.offset - next > max_ahead_) {
      (*outcomes)[i] = DafkaAppend::kTooFar;
      continue;
    }
    mine.insert(r.offset);
    std::string offset_bytes = encode_u64(r.offset);  // fits the small-string buffer: no allocation
    rocksdb::Slice key[2] = {slice(mine.prefix), slice(offset_bytes)};
    rocksdb::Slice value = slice(r.content);
    batch.Put(column, rocksdb::SliceParts(key, 2), rocksdb::SliceParts(&value, 1));
    (*outcomes)[i] = DafkaAppend::kStored;
  }
  // New heads: walk up over stored offsets, old and new.
  bool advanced = false;
  for (auto& a : added) {
    if (a.offsets.empty()) continue;
    const PartitionState* p = find(a.subject, a.partition);
    a.next = p ? p->next : 0;
    auto it = a.offsets.begin();  // all >= the old next
    while (true) {
      if (it != a.offsets.end() && *it == a.next) {
        ++it;
      } else if (!p || !p->beyond.contains(a.next)) {
        break;
      }
      ++a.next;
    }
    batch.Put(db_->handle(Column::kDafkaHeads), slice(a.prefix), slice(encode_u64(a.next)));
    advanced = true;
  }
  if (!advanced) return Status::Ok();
  Status s = db_->write(batch);
  if (!s.ok()) {
    outcomes->assign(records.size(), DafkaAppend::kDuplicate);
    return s;
  }
  for (const auto& a : added) {
    if (a.offsets.empty()) continue;
    auto found = partitions_.find(DafkaPartitionOrder::View(a.subject, a.partition));
    if (found == partitions_.end()) {
      found = partitions_.emplace(DafkaPartitionKey(a.subject, a.partition), PartitionState{}).first;
      partition_count_ = partitions_.size();
    }
    PartitionState& p = found->second;
    for (auto it = std::lower_bound(a.offsets.begin(), a.offsets.end(), a.next); it != a.offsets.end(); ++it) {
      p.beyond.insert(*it);
    }
    p.next = a.next;
    p.beyond.erase(p.beyond.begin(), p.beyond.lower_bound(a.next));
  }
  return Status::Ok();
}

Status DafkaLog::skip_gap(std::string_view subject, std::string_view partition, std::uint64_t* skipped) {
  *skipped = 0;
  auto found = partitions_.find(DafkaPartitionOrder::View(subject, partition));
  if (found == partitions_.end() || found->second.beyond.empty()) return Status::Ok();
  PartitionState& p = found->second;
  std::uint64_t next = *p.beyond.begin();
  std::uint64_t gap = next - p.next;
  while (p.beyond.contains(next)) ++next;
  std::string prefix = dafka_partition_prefix(subject, partition);
  rocksdb::WriteBatch batch;
  batch.Put(db_->handle(Column::kDafkaHeads), slice(prefix), slice(encode_u64(next)));
  Status s = db_->write(batch);
  if (!s.ok()) return s;
  p.next = next;
  p.beyond.erase(p.beyond.begin(), p.beyond.lower_bound(next));
  *skipped = gap;
  return Status::Ok();
}

std::unique_ptr<DafkaCursor> DafkaLog::read(std::string_view subject, std::string_view partition, std::uint64_t from,
                                            std::uint64_t count) {
  return std::make_unique<RocksDafkaCursor>(db_, dafka_partition_prefix(subject, partition), from, count);
}

std::vector<DafkaHead> DafkaLog::heads(std::string_view subject) const {
  std::vector<DafkaHead> out;
  for (auto it = partitions_.lower_bound(DafkaPartitionKey(subject, "")); it != partitions_.end(); ++it) {
    if (it->first.first != subject) break;
    if (it->second.next > 0) out.push_back({it->first.second, it->second.next - 1});
  }
  return out;
}

}  // namespace zstore::storage
