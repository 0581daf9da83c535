#include "storage/inspect/inspect.h"

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>

#include <memory>
#include <string_view>

#include "protocol/byte_order.h"
#include "storage/dafka/dafka_log.h"
#include "storage/db/rocks_status.h"

namespace zstore::storage {
namespace {

std::string_view view(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }

std::unique_ptr<rocksdb::Iterator> scan(Database* db, Column column) {
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  return std::unique_ptr<rocksdb::Iterator>(db->db()->NewIterator(ro, db->handle(column)));
}

}  // namespace

Status column_stats(Database* db, Column column, ColumnStats* out, const std::function<void()>& on_entry) {
  *out = ColumnStats{};
  auto it = scan(db, column);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ++out->keys;
    out->key_bytes += it->key().size();
    out->value_bytes += it->value().size();
    if (on_entry) on_entry();
  }
  if (!it->status().ok()) {
    return from_rocks(it->status(), "read of column family '" + std::string(column_name(column)) + "'");
  }
  std::uint64_t sst = 0;
  if (db->db()->GetIntProperty(db->handle(column), "rocksdb.total-sst-files-size", &sst)) out->sst_bytes = sst;
  std::uint64_t blob = 0;
  if (db->db()->GetIntProperty(db->handle(column), "rocksdb.total-blob-file-size", &blob)) out->blob_bytes = blob;
  return Status::Ok();
}

Status dafka_partitions(Database* db, std::vector<DafkaPartitionInfo>* out) {
  out->clear();
  auto it = scan(db, Column::kDafkaHeads);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    DafkaPartitionKey key;
    DafkaHeadValue head;
    if (!parse_dafka_partition_prefix(view(it->key()), &key) || !decode_dafka_head(view(it->value()), &head)) {
      return Status::Corruption("corrupt Dafka head entry (" + std::to_string(it->key().size()) + "-byte key)");
    }
    out->push_back({std::move(key.first), std::move(key.second), head.next, head.floor, head.records, head.bytes});
  }
  if (!it->status().ok()) return from_rocks(it->status(), "read of Dafka heads");
  return Status::Ok();
}

}  // namespace zstore::storage
