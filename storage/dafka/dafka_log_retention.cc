// DafkaLog's side of retention: the partition list it reads, the trims and
// drops it applies (each one small atomic write, then the state published
// under the mutex), and the per-topic counters.
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>

#include "storage/dafka/dafka_log.h"
#include "storage/dafka/dafka_log_internal.h"

namespace zstore::storage {

using dafka_internal::encode_u64;
using dafka_internal::partition_end;
using dafka_internal::slice;

std::vector<DafkaPartitionStats> DafkaLog::partitions_after(const DafkaPartitionKey* after, std::size_t limit) const {
  std::lock_guard lock(mu_);
  std::vector<DafkaPartitionStats> out;
  auto it = after ? partitions_.upper_bound(*after) : partitions_.begin();
  for (; it != partitions_.end() && out.size() < limit; ++it) {
    const PartitionState& p = it->second;
    out.push_back(
        {it->first.first, it->first.second, p.next, p.floor, p.records, p.bytes, p.last_write_ms, !p.beyond.empty()});
  }
  return out;
}

// From the published list and its atomics: never waits for a writer. A
// topic just added or dropped has 0 partitions there, and is left out.
std::vector<DafkaTopicTotals> DafkaLog::topic_totals() const {
  auto list = topic_list();
  std::vector<DafkaTopicTotals> out;
  if (!list) return out;
  out.reserve(list->size());
  for (const auto& t : *list) {
    std::uint64_t partitions = t->partitions.load(std::memory_order_relaxed);
    if (partitions == 0) continue;
    out.push_back(
        {t->topic, partitions, t->records.load(std::memory_order_relaxed), t->bytes.load(std::memory_order_relaxed)});
  }
  return out;
}

std::size_t DafkaLog::topic_count() const {
  auto list = topic_list();
  if (!list) return 0;
  return static_cast<std::size_t>(std::count_if(
      list->begin(), list->end(), [](const auto& t) { return t->partitions.load(std::memory_order_relaxed) != 0; }));
}

std::uint64_t DafkaLog::partitions_of(std::string_view topic) const {
  auto list = topic_list();
  if (!list) return 0;
  auto it = std::lower_bound(list->begin(), list->end(), topic,
                             [](const auto& t, std::string_view name) { return t->topic < name; });
  return it == list->end() || (*it)->topic != topic ? 0 : (*it)->partitions.load(std::memory_order_relaxed);
}

Status DafkaLog::trim(const DafkaPartitionStats& seen, std::uint64_t new_floor, std::uint64_t removed_records,
                      std::uint64_t removed_bytes, bool* applied) {
  *applied = false;
  std::lock_guard writer(write_mu_);  // reads partitions_ without mu_, writes without it
  auto found = partitions_.find(DafkaPartitionOrder::View(seen.subject, seen.partition));
  if (found == partitions_.end()) return Status::Ok();
  PartitionState& p = found->second;
  if (p.floor != seen.floor || new_floor <= p.floor || new_floor > p.next || removed_records > p.records ||
      removed_bytes > p.bytes) {
    return Status::Ok();
  }
  std::string prefix = dafka_partition_prefix(seen.subject, seen.partition);
  const std::string& from = prefix;  // not prefix + offset 0: see PartitionOfRecordKey (database.cc)
  std::string to = prefix + encode_u64(new_floor);
  // Marks at offsets <= new_floor only date records that are gone.
  std::string marks_to = new_floor == ~std::uint64_t{0} ? partition_end(prefix) : prefix + encode_u64(new_floor + 1);
  DafkaHeadValue head{p.next, new_floor, p.records - removed_records, p.bytes - removed_bytes, p.last_write_ms, true};
  rocksdb::WriteBatch batch;
  batch.DeleteRange(db_->handle(Column::kDafkaRecords), slice(from), slice(to));
  batch.DeleteRange(db_->handle(Column::kDafkaTimes), slice(from), slice(marks_to));
  batch.Put(db_->handle(Column::kDafkaHeads), slice(prefix), slice(encode_dafka_head(head)));
  Status s = db_->write(batch, Database::WriteKind::kReclaims);
  if (!s.ok()) return s;
  std::lock_guard lock(mu_);
  p.floor = new_floor;
  p.records -= removed_records;
  p.bytes -= removed_bytes;
  count(found->first.first, 0, -static_cast<std::int64_t>(removed_records), -static_cast<std::int64_t>(removed_bytes));
  retained_away_.fetch_add(removed_records, std::memory_order_relaxed);
  *applied = true;
  return Status::Ok();
}

Status DafkaLog::drop(const DafkaPartitionStats& seen, bool* applied) {
  *applied = false;
  std::lock_guard writer(write_mu_);
  auto found = partitions_.find(DafkaPartitionOrder::View(seen.subject, seen.partition));
  if (found == partitions_.end()) return Status::Ok();
  const PartitionState& p = found->second;
  if (p.next != seen.next || p.floor != p.next || !p.beyond.empty() || p.records != 0 ||
      p.last_write_ms != seen.last_write_ms) {
    return Status::Ok();
  }
  std::string prefix = dafka_partition_prefix(seen.subject, seen.partition);
  std::string end = partition_end(prefix);
  rocksdb::WriteBatch batch;
  batch.DeleteRange(db_->handle(Column::kDafkaRecords), slice(prefix), slice(end));
  batch.DeleteRange(db_->handle(Column::kDafkaTimes), slice(prefix), slice(end));
  batch.Delete(db_->handle(Column::kDafkaHeads), slice(prefix));
  Status s = db_->write(batch, Database::WriteKind::kReclaims);
  if (!s.ok()) return s;
  std::lock_guard lock(mu_);
  if (count(found->first.first, -1, 0, -static_cast<std::int64_t>(p.bytes))) publish_topics();
  partitions_.erase(found);
  partition_count_ = partitions_.size();
  dropped_.fetch_add(1, std::memory_order_relaxed);
  *applied = true;
  return Status::Ok();
}

}  // namespace zstore::storage
