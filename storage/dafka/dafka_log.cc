#include "storage/dafka/dafka_log.h"

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <chrono>

#include "protocol/byte_order.h"
#include "storage/dafka/dafka_log_internal.h"
#include "storage/db/rocks_status.h"

namespace zstore::storage {

using dafka_internal::encode_u64;
using dafka_internal::slice;
using dafka_internal::view;

namespace {

// The offsets of one partition that one append() stores, ascending (records
// of a partition mostly arrive in offset order: push_back).
struct AddedOffsets {
  std::string_view subject;
  std::string_view partition;
  std::string prefix;  // the partition's key prefix
  std::vector<std::uint64_t> offsets;
  std::vector<std::string_view> contents;  // the record at offsets[i] is contents[i]
  std::uint64_t bytes = 0;                 // content bytes of those offsets
  std::uint64_t next = 0;                  // the new head + 1, once computed
  bool marked = false;                     // a time mark was written

  bool contains(std::uint64_t offset) const {
    return !offsets.empty() && offset <= offsets.back() && std::binary_search(offsets.begin(), offsets.end(), offset);
  }
  void insert(std::uint64_t offset, std::string_view content) {
    if (offsets.empty() || offsets.back() < offset) {
      offsets.push_back(offset);
      contents.push_back(content);
    } else {
      auto at = std::lower_bound(offsets.begin(), offsets.end(), offset);
      contents.insert(contents.begin() + (at - offsets.begin()), content);
      offsets.insert(at, offset);
    }
    bytes += content.size();
  }
};

// The entry of (subject, partition) in added, created if missing. A batch
// touches few partitions: a linear search beats a map.
AddedOffsets& added_for(std::vector<AddedOffsets>& added, std::string_view subject, std::string_view partition) {
  for (auto& a : added) {
    if (a.partition == partition && a.subject == subject) return a;
  }
  added.push_back({subject, partition, dafka_partition_prefix(subject, partition), {}, {}, 0, 0, false});
  return added.back();
}

}  // namespace

struct DafkaLog::AppendPlan {
  std::vector<AddedOffsets> added;
  rocksdb::WriteBatch batch;
  std::int64_t now = 0;
  bool advanced = false;
};

DafkaLog::DafkaLog(Database* db, DafkaLogOptions options) : db_(db), options_(std::move(options)) {}

Status DafkaLog::Open(Database* db, std::unique_ptr<DafkaLog>* out, std::uint64_t max_ahead) {
  DafkaLogOptions options;
  options.max_ahead = max_ahead;
  return Open(db, out, std::move(options));
}

Status DafkaLog::Open(Database* db, std::unique_ptr<DafkaLog>* out, DafkaLogOptions options) {
  std::unique_ptr<DafkaLog> log(new DafkaLog(db, std::move(options)));
  Status s = log->load();
  if (!s.ok()) return s;
  *out = std::move(log);
  return Status::Ok();
}

std::int64_t DafkaLog::now_ms() const {
  if (options_.now_ms) return options_.now_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Status DafkaLog::load() {
  std::lock_guard writer(write_mu_);
  std::lock_guard lock(mu_);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->db()->NewIterator(rocksdb::ReadOptions(), db_->handle(Column::kDafkaHeads)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    DafkaPartitionKey key;
    if (!parse_dafka_partition_prefix(view(it->key()), &key)) return Status::Corruption("corrupt Dafka head entry");
    PartitionState state;
    Status s = load_partition(key, view(it->value()), &state);
    if (!s.ok()) return s;
    count(key.first, 1, static_cast<std::int64_t>(state.records), static_cast<std::int64_t>(state.bytes));
    partitions_.emplace(std::move(key), std::move(state));
  }
  if (!it->status().ok()) return from_rocks(it->status(), "Dafka heads read");
  partition_count_ = partitions_.size();
  publish_topics();
  return Status::Ok();
}

// The state of one partition from its head entry and, beyond the head, its
// records; a first-format entry counts every record (once, at open).
Status DafkaLog::load_partition(const DafkaPartitionKey& key, std::string_view value, PartitionState* state) {
  DafkaHeadValue head;
  if (!decode_dafka_head(value, &head)) return Status::Corruption("corrupt Dafka head entry");
  state->next = head.next;
  state->floor = head.floor;
  state->records = head.records;
  state->bytes = head.bytes;
  state->last_write_ms = head.has_counters ? head.last_write_ms : now_ms();
  std::uint64_t from = head.has_counters ? head.next : 0;
  auto cursor =
      dafka_internal::make_cursor(db_, dafka_partition_prefix(key.first, key.second), from, ~std::uint64_t{0} - from);
  DafkaRecord r;
  while (cursor->next(&r)) {
    if (r.offset >= state->next) state->beyond.insert(r.offset);
    if (!head.has_counters) {
      ++state->records;
      state->bytes += r.content.size();
    }
  }
  return cursor->status();
}

bool DafkaLog::count(const std::string& topic, std::int64_t partitions, std::int64_t records, std::int64_t bytes) {
  bool changed = false;
  auto it = topics_.find(topic);
  if (it == topics_.end()) {
    it = topics_.emplace(topic, std::make_shared<TopicCounters>(topic)).first;
    changed = true;
  }
  TopicCounters& t = *it->second;  // written only here, under mu_: relaxed adds (negative ones wrap)
  t.partitions.fetch_add(static_cast<std::uint64_t>(partitions), std::memory_order_relaxed);
  t.records.fetch_add(static_cast<std::uint64_t>(records), std::memory_order_relaxed);
  t.bytes.fetch_add(static_cast<std::uint64_t>(bytes), std::memory_order_relaxed);
  if (t.partitions.load(std::memory_order_relaxed) == 0) {
    topics_.erase(it);
    changed = true;
  }
  return changed;
}

void DafkaLog::publish_topics() {
  auto list = std::make_shared<TopicList>();
  list->reserve(topics_.size());
  for (const auto& [_, counters] : topics_) list->push_back(counters);
  std::lock_guard lock(published_mu_);
  published_ = std::move(list);
}

std::shared_ptr<const DafkaLog::TopicList> DafkaLog::topic_list() const {
  std::lock_guard lock(published_mu_);
  return published_;
}

const DafkaLog::PartitionState* DafkaLog::find(std::string_view subject, std::string_view partition) const {
  auto it = partitions_.find(DafkaPartitionOrder::View(subject, partition));
  return it == partitions_.end() ? nullptr : &it->second;
}

std::optional<std::uint64_t> DafkaLog::head(std::string_view subject, std::string_view partition) const {
  std::lock_guard lock(mu_);
  const PartitionState* p = find(subject, partition);
  if (!p || p->next == 0) return std::nullopt;
  return p->next - 1;
}

bool DafkaLog::known(std::string_view subject, std::string_view partition) const {
  std::lock_guard lock(mu_);
  return find(subject, partition) != nullptr;
}

std::uint64_t DafkaLog::floor(std::string_view subject, std::string_view partition) const {
  std::lock_guard lock(mu_);
  const PartitionState* p = find(subject, partition);
  return p ? p->floor : 0;
}

std::optional<std::uint64_t> DafkaLog::first_after_gap(std::string_view subject, std::string_view partition) const {
  std::lock_guard lock(mu_);
  const PartitionState* p = find(subject, partition);
  if (!p || p->beyond.empty()) return std::nullopt;
  return *p->beyond.begin();
}

Status DafkaLog::append(std::span<const DafkaRecord> records, std::vector<DafkaAppend>* outcomes) {
  std::vector<DafkaRecordRef> refs(records.begin(), records.end());
  return append(std::span<const DafkaRecordRef>(refs), outcomes);
}

Status DafkaLog::append(std::span<const DafkaRecordRef> records, std::vector<DafkaAppend>* outcomes, WriteSync sync) {
  outcomes->assign(records.size(), DafkaAppend::kDuplicate);
  std::lock_guard writer(write_mu_);  // plans from partitions_ without mu_: no other writer changes it
  AppendPlan plan;
  // One allocation for the batch: each record's key, content and a few
  // bytes of framing (growing it by appends was ~5% of an append).
  std::size_t bytes = 64;
  for (const auto& r : records) bytes += r.subject.size() + r.partition.size() + r.content.size() + 32;
  plan.batch = rocksdb::WriteBatch(bytes);
  plan.now = now_ms();
  plan_records(records, &plan, outcomes);
  put_runs(&plan);
  plan_heads(&plan);
  if (!plan.advanced) return Status::Ok();
  Status s = db_->write(plan.batch, sync);
  if (!s.ok()) {
    outcomes->assign(records.size(), DafkaAppend::kDuplicate);
    return s;
  }
  std::lock_guard lock(mu_);  // written: readers may see it now
  apply_plan(plan);
  return Status::Ok();
}

void DafkaLog::plan_records(std::span<const DafkaRecordRef> records, AppendPlan* plan,
                            std::vector<DafkaAppend>* outcomes) {
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    AddedOffsets& mine = added_for(plan->added, r.subject, r.partition);
    const PartitionState* p = find(r.subject, r.partition);
    std::uint64_t next = p ? p->next : 0;
    if (r.offset < next || (p && p->beyond.contains(r.offset)) || mine.contains(r.offset)) continue;
    if (r.offset - next > options_.max_ahead) {
      (*outcomes)[i] = DafkaAppend::kTooFar;
      continue;
    }
    mine.insert(r.offset, r.content);
    (*outcomes)[i] = DafkaAppend::kStored;
  }
}

// The records each partition stores, as runs of consecutive offsets: one
// RocksDB entry per run (dafka_log_internal.h), so a saturated producer's
// batch costs one memtable insert, not one per record.
void DafkaLog::put_runs(AppendPlan* plan) {
  auto* column = db_->handle(Column::kDafkaRecords);
  dafka_internal::RunWriter writer;
  for (const auto& a : plan->added)
    dafka_internal::put_partition_runs(plan->batch, column, a.prefix, a.offsets, a.contents, writer);
}

// New heads (walking up over stored offsets, old and new), head entries
// with their counters and, once per mark interval, a time mark.
void DafkaLog::plan_heads(AppendPlan* plan) {
  for (auto& a : plan->added) {
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
    DafkaHeadValue head{
        a.next, p ? p->floor : 0, (p ? p->records : 0) + a.offsets.size(), (p ? p->bytes : 0) + a.bytes, plan->now,
        true};
    plan->batch.Put(db_->handle(Column::kDafkaHeads), slice(a.prefix), slice(encode_dafka_head(head)));
    auto interval = static_cast<std::int64_t>(options_.retention.mark_interval_ms(a.subject));
    if (!p || plan->now - p->last_mark_ms >= interval) {
      plan->batch.Put(db_->handle(Column::kDafkaTimes), slice(a.prefix + encode_u64(a.offsets.front())),
                      slice(encode_u64(static_cast<std::uint64_t>(plan->now))));
      a.marked = true;
    }
    plan->advanced = true;
  }
}

void DafkaLog::apply_plan(const AppendPlan& plan) {
  bool topics_changed = false;
  for (const auto& a : plan.added) {
    if (a.offsets.empty()) continue;
    auto found = partitions_.find(DafkaPartitionOrder::View(a.subject, a.partition));
    if (found == partitions_.end()) {
      found = partitions_.emplace(DafkaPartitionKey(a.subject, a.partition), PartitionState{}).first;
      partition_count_ = partitions_.size();
      topics_changed |= count(found->first.first, 1, 0, 0);
    }
    PartitionState& p = found->second;
    for (auto it = std::lower_bound(a.offsets.begin(), a.offsets.end(), a.next); it != a.offsets.end(); ++it) {
      p.beyond.insert(*it);
    }
    p.next = a.next;
    p.beyond.erase(p.beyond.begin(), p.beyond.lower_bound(a.next));
    p.records += a.offsets.size();
    p.bytes += a.bytes;
    p.last_write_ms = plan.now;
    if (a.marked) p.last_mark_ms = plan.now;
    count(found->first.first, 0, static_cast<std::int64_t>(a.offsets.size()), static_cast<std::int64_t>(a.bytes));
  }
  if (topics_changed) publish_topics();
}

Status DafkaLog::skip_gap(std::string_view subject, std::string_view partition, std::uint64_t* skipped) {
  *skipped = 0;
  std::lock_guard writer(write_mu_);
  auto found = partitions_.find(DafkaPartitionOrder::View(subject, partition));
  if (found == partitions_.end() || found->second.beyond.empty()) return Status::Ok();
  PartitionState& p = found->second;
  std::uint64_t next = *p.beyond.begin();
  std::uint64_t gap = next - p.next;
  while (p.beyond.contains(next)) ++next;
  DafkaHeadValue head{next, p.floor, p.records, p.bytes, p.last_write_ms, true};
  rocksdb::WriteBatch batch;
  batch.Put(db_->handle(Column::kDafkaHeads), slice(dafka_partition_prefix(subject, partition)),
            slice(encode_dafka_head(head)));
  Status s = db_->write(batch);
  if (!s.ok()) return s;
  std::lock_guard lock(mu_);
  p.next = next;
  p.beyond.erase(p.beyond.begin(), p.beyond.lower_bound(next));
  *skipped = gap;
  return Status::Ok();
}

std::unique_ptr<DafkaCursor> DafkaLog::read(std::string_view subject, std::string_view partition, std::uint64_t from,
                                            std::uint64_t count) {
  // A run that straddles the floor keeps its records below it on disk
  // until a later trim: they are not returned.
  std::uint64_t floor = this->floor(subject, partition);
  if (from < floor) {
    std::uint64_t skipped = floor - from;
    count = count > skipped ? count - skipped : 0;
    from = floor;
  }
  return dafka_internal::make_cursor(db_, dafka_partition_prefix(subject, partition), from, count);
}

std::vector<DafkaHead> DafkaLog::heads(std::string_view subject) const {
  std::lock_guard lock(mu_);
  std::vector<DafkaHead> out;
  for (auto it = partitions_.lower_bound(DafkaPartitionKey(subject, "")); it != partitions_.end(); ++it) {
    if (it->first.first != subject) break;
    if (it->second.next > 0) out.push_back({it->first.second, it->second.next - 1});
  }
  return out;
}

}  // namespace zstore::storage
