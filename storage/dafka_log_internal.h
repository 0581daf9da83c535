// Internals shared by the DafkaLog sources (not a public header): slices,
// u64 encoding, partition key ranges and the record cursor.
#pragma once

#include <rocksdb/slice.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "storage/dafka_log.h"
#include "storage/slice.h"

namespace zstore::storage::dafka_internal {

using storage::slice;
inline std::string_view view(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }

std::string encode_u64(std::uint64_t v);
// The smallest key above every key of the partition (offset keys are prefix + 8 bytes).
std::string partition_end(std::string_view prefix);
// Records of the partition with this key prefix in [from, from + count), from disk.
std::unique_ptr<DafkaCursor> make_cursor(Database* db, std::string prefix, std::uint64_t from, std::uint64_t count);

}  // namespace zstore::storage::dafka_internal
