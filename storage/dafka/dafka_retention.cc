#include "storage/dafka/dafka_retention.h"

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>

#include <algorithm>

#include "protocol/byte_order.h"
#include "storage/dafka/dafka_log_internal.h"
#include "storage/db/rocks_status.h"

namespace zstore::storage {

using dafka_internal::slice;
using dafka_internal::view;

namespace {
constexpr std::size_t kChunk = 256;  // partitions copied per hold of the log's mutex
}

Status DafkaRetention::run(std::int64_t now_ms, DafkaRetentionPass* out) {
  *out = DafkaRetentionPass{};
  DafkaPartitionKey last;
  bool started = false;
  while (true) {
    auto chunk = log_->partitions_after(started ? &last : nullptr, kChunk);
    if (chunk.empty()) return Status::Ok();
    for (const auto& p : chunk) {
      ++out->partitions_seen;
      Status s = retain(p, now_ms, out);
      if (!s.ok()) return s;
    }
    last = DafkaPartitionKey(chunk.back().subject, chunk.back().partition);
    started = true;
  }
}

// The lowest offset not known to be older than cutoff_ms: every record
// below a time mark (o, t) with t <= cutoff was appended before t.
Status DafkaRetention::age_floor(const DafkaPartitionStats& p, std::int64_t cutoff_ms, std::uint64_t* floor) {
  *floor = p.floor;
  if (p.last_write_ms <= cutoff_ms) {  // nothing appended since: all of it is older
    *floor = p.next;
    return Status::Ok();
  }
  std::string prefix = dafka_partition_prefix(p.subject, p.partition);
  std::string end = dafka_internal::partition_end(prefix);
  rocksdb::Slice upper(end);
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db_->db()->NewIterator(ro, db_->handle(Column::kDafkaTimes)));
  for (it->Seek(slice(prefix)); it->Valid(); it->Next()) {
    std::string_view key = view(it->key());
    if (key.size() != prefix.size() + 8 || it->value().size() != 8) continue;
    auto at = static_cast<std::int64_t>(protocol::get_be<std::uint64_t>(view(it->value())));
    if (at > cutoff_ms) break;
    *floor = std::max(*floor, std::min(p.next, protocol::get_be<std::uint64_t>(key.substr(prefix.size()))));
  }
  if (!it->status().ok()) return from_rocks(it->status(), "Dafka time marks read");
  return Status::Ok();
}

Status DafkaRetention::retain(const DafkaPartitionStats& p, std::int64_t now_ms, DafkaRetentionPass* out) {
  const DafkaRetentionPolicy& policy = rules_.lookup(p.subject);
  if (policy.unlimited()) return Status::Ok();
  std::int64_t cutoff = policy.ms ? now_ms - static_cast<std::int64_t>(policy.ms) : INT64_MIN;
  std::uint64_t by_age = p.floor;
  if (policy.ms) {
    if (Status s = age_floor(p, cutoff, &by_age); !s.ok()) return s;
  }
  std::uint64_t records = p.records, bytes = p.bytes, floor = p.floor;
  auto over = [&](const DafkaRecord& r) {
    return r.offset < by_age || (policy.records && records > policy.records) || (policy.bytes && bytes > policy.bytes);
  };
  auto cursor = log_->read(p.subject, p.partition, p.floor, p.next - p.floor);
  DafkaRecord r;
  while (cursor->next(&r) && over(r)) {
    --records;
    bytes -= std::min<std::uint64_t>(bytes, r.content.size());
    floor = r.offset + 1;
  }
  if (!cursor->status().ok()) return cursor->status();
  // The loop stopped at a record at or above by_age, or at the head: no
  // record lies between the last one deleted and by_age.
  floor = std::max(floor, by_age);
  if (floor > p.floor) {
    bool applied = false;
    if (Status s = log_->trim(p, floor, p.records - records, p.bytes - bytes, &applied); !s.ok()) return s;
    if (applied) {
      ++out->partitions_trimmed;
      out->records_deleted += p.records - records;
      out->bytes_deleted += p.bytes - bytes;
    }
  }
  if (policy.ms && floor == p.next && !p.gap && p.last_write_ms <= cutoff && records == 0) {
    DafkaPartitionStats now_seen = p;
    now_seen.floor = floor;
    bool applied = false;
    if (Status s = log_->drop(now_seen, &applied); !s.ok()) return s;
    if (applied) ++out->partitions_dropped;
  }
  return Status::Ok();
}

}  // namespace zstore::storage
