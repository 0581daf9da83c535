#include "storage/dafka/dafka_record_batch.h"

#include "storage/dafka/dafka_log_internal.h"

namespace zstore::storage {

namespace dafka_internal {

void put_partition_runs(rocksdb::WriteBatch& batch, rocksdb::ColumnFamilyHandle* column, std::string_view prefix,
                        std::span<const std::uint64_t> offsets, std::span<const std::string_view> contents,
                        RunWriter& writer) {
  std::size_t first = 0;
  while (first < offsets.size()) {
    std::size_t end = run_end(offsets, contents, first);
    writer.put(batch, column, prefix, offsets.subspan(first, end - first), contents.subspan(first, end - first));
    first = end;
  }
}

}  // namespace dafka_internal

void put_dafka_records(rocksdb::WriteBatch& batch, Database& db, std::span<const DafkaPartitionRecords> partitions) {
  auto* column = db.handle(Column::kDafkaRecords);
  dafka_internal::RunWriter writer;
  for (const auto& p : partitions) {
    dafka_internal::put_partition_runs(batch, column, p.prefix, p.offsets, p.contents, writer);
  }
}

}  // namespace zstore::storage
