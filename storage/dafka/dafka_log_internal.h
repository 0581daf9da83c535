// Internals shared by the DafkaLog sources (not a public header): slices,
// u64 encoding, partition key ranges, record runs and the record cursor.
#pragma once

#include <rocksdb/slice.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/dafka/dafka_log.h"
#include "storage/db/slice.h"

namespace rocksdb {
class ColumnFamilyHandle;
class WriteBatch;
}  // namespace rocksdb

namespace zstore::storage::dafka_internal {

using storage::slice;
inline std::string_view view(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }

std::string encode_u64(std::uint64_t v);
// The smallest key above every key of the partition (record keys are prefix
// + 8 bytes, or 9 for a run).
std::string partition_end(std::string_view prefix);
// kDafkaRecords holds two kinds of entries, both keyed by the partition
// prefix and the offset of their last record, so that a Seek to an offset
// finds the entry holding it and a range delete up to a floor removes
// exactly the entries wholly below it:
//   one record:  prefix | offset u64 BE                 -> content
//   a run:       prefix | last offset u64 BE | kRunTag  -> the contents as
//                PackedValues (packed_values.h), offsets last-count+1..last
// A run holds consecutive offsets stored by one append, at most
// kMaxRunBytes of value unless it is a single record (then it is written as
// one record). Databases written before runs hold only single records.
inline constexpr char kRunTag = 0x01;
inline constexpr std::size_t kMaxRunBytes = 64 << 10;

// The end (exclusive) of the run starting at offsets[first]: consecutive
// offsets while the value stays within kMaxRunBytes.
std::size_t run_end(std::span<const std::uint64_t> offsets, std::span<const std::string_view> contents,
                    std::size_t first);

// Adds one entry (a run, or a single record) to a batch, reusing its
// buffers from one call to the next.
class RunWriter {
 public:
  void put(rocksdb::WriteBatch& batch, rocksdb::ColumnFamilyHandle* column, std::string_view prefix,
           std::span<const std::uint64_t> offsets, std::span<const std::string_view> contents);

 private:
  std::string headers_;                // count, then each record's length
  std::vector<rocksdb::Slice> parts_;  // the value: headers and contents interleaved
};

// One partition's records as runs of consecutive offsets (one entry each).
void put_partition_runs(rocksdb::WriteBatch& batch, rocksdb::ColumnFamilyHandle* column, std::string_view prefix,
                        std::span<const std::uint64_t> offsets, std::span<const std::string_view> contents,
                        RunWriter& writer);

// Records of the partition with this key prefix in [from, from + count), from disk.
std::unique_ptr<DafkaCursor> make_cursor(Database* db, std::string prefix, std::uint64_t from, std::uint64_t count);

}  // namespace zstore::storage::dafka_internal
