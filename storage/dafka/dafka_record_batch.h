// How Dafka records land in the dafka_records column family: runs of
// consecutive offsets, one entry each (dafka_log_internal.h), the encoding
// DafkaLog::append writes and zstore-bench's floor measures. Heads, time
// marks and checks are the log's (dafka_log.h).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include <rocksdb/write_batch.h>

#include "storage/db/database.h"

namespace zstore::storage {

// One partition's records: prefix is dafka_partition_prefix (dafka_log.h),
// offsets ascend, contents[i] is offsets[i]'s.
struct DafkaPartitionRecords {
  std::string_view prefix;
  std::span<const std::uint64_t> offsets;
  std::span<const std::string_view> contents;
};

// Adds each partition's records to batch as one DafkaLog::append stores a
// turn's (one set of buffers for all partitions), with no head, time mark
// or check.
void put_dafka_records(rocksdb::WriteBatch& batch, Database& db, std::span<const DafkaPartitionRecords> partitions);

}  // namespace zstore::storage
