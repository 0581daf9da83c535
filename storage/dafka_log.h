// DafkaLog: the durable Dafka partition logs on a Database. A record is kept
// under (subject, partition, offset) in kDafkaRecords, so one partition's
// records are contiguous and in offset order; kDafkaHeads holds, per
// (subject, partition), the next offset expected (head + 1; 0 while offset 0
// is missing). Records after a gap are kept, up to max_ahead offsets past
// the next expected one; the head only advances over contiguous offsets, also over
// records stored earlier once the gap before them is filled.
// Not thread-safe: one owner thread (the Dafka store reactor) calls
// everything. Cursors are read from that same thread while appends go on.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/database.h"
#include "storage/status.h"

namespace zstore::storage {

struct DafkaRecord {
  std::string subject;
  std::string partition;
  std::uint64_t offset = 0;
  std::string content;
  bool operator==(const DafkaRecord&) const = default;
};

// (subject, partition): one partition of one topic.
using DafkaPartitionKey = std::pair<std::string, std::string>;

// Orders partitions by (subject, partition). Transparent: maps keyed by
// DafkaPartitionKey are searched with a pair of views, without copying.
struct DafkaPartitionOrder {
  using is_transparent = void;
  using View = std::pair<std::string_view, std::string_view>;
  static View view(const DafkaPartitionKey& k) { return {k.first, k.second}; }
  static View view(const View& v) { return v; }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return view(a) < view(b);
  }
};

struct DafkaHead {
  std::string partition;
  std::uint64_t head = 0;  // highest contiguous offset stored
};

// What append() did with each record, in input order.
enum class DafkaAppend : std::uint8_t {
  kStored,     // new, now on disk
  kDuplicate,  // already stored (or twice in the batch): ignored
  kTooFar,     // more than max_ahead past the next expected offset (as before this append()): refused
};

// Reads stored records of one partition in ascending offset order, from
// disk (memory does not grow with the range).
class DafkaCursor {
 public:
  virtual ~DafkaCursor() = default;
  // Fills *out with the next record; false at the end of the range or on error.
  virtual bool next(DafkaRecord* out) = 0;
  virtual Status status() const = 0;
};

class DafkaLog {
 public:
  static constexpr std::uint64_t kDefaultMaxAhead = 100000;

  // Loads the heads and the records stored beyond them. db must outlive the log.
  static Status Open(Database* db, std::unique_ptr<DafkaLog>* out, std::uint64_t max_ahead = kDefaultMaxAhead);

  // Highest contiguous offset stored from 0; nullopt while offset 0 is missing.
  std::optional<std::uint64_t> head(std::string_view subject, std::string_view partition) const;
  // Whether anything of this partition is stored (contiguous or not).
  bool known(std::string_view subject, std::string_view partition) const;
  // Lowest offset stored beyond the head (after a gap), if any.
  std::optional<std::uint64_t> first_after_gap(std::string_view subject, std::string_view partition) const;

  // Stores records in one atomic batch together with the advanced heads.
  // *outcomes (resized to records.size()) says what happened to each. On
  // failure nothing is stored and the in-memory state is unchanged.
  Status append(std::span<const DafkaRecord> records, std::vector<DafkaAppend>* outcomes);

  // Gives up on the missing offsets before the first record kept after a
  // gap: the head moves to that record and over every contiguous record
  // stored after it, persisted. *skipped = how many offsets were given up
  // (0, and nothing written, when the partition has no gap). A FETCH of
  // the skipped offsets later returns the records that exist.
  Status skip_gap(std::string_view subject, std::string_view partition, std::uint64_t* skipped);

  // Records of a partition with offsets in [from, from + count), ascending;
  // offsets not stored are skipped.
  std::unique_ptr<DafkaCursor> read(std::string_view subject, std::string_view partition, std::uint64_t from,
                                    std::uint64_t count);

  // Partitions of exactly this subject that have a head.
  std::vector<DafkaHead> heads(std::string_view subject) const;

  std::uint64_t max_ahead() const { return max_ahead_; }
  // Partitions known; the one member safe to read from any thread (metrics).
  std::size_t partition_count() const { return partition_count_.load(std::memory_order_relaxed); }

 private:
  struct PartitionState {
    std::uint64_t next = 0;            // head + 1
    std::set<std::uint64_t> beyond;    // offsets stored above next
  };
  DafkaLog(Database* db, std::uint64_t max_ahead) : db_(db), max_ahead_(max_ahead) {}
  Status load();
  Status load_beyond(const DafkaPartitionKey& key, PartitionState* state);
  const PartitionState* find(std::string_view subject, std::string_view partition) const;

  Database* db_;
  std::uint64_t max_ahead_;
  std::map<DafkaPartitionKey, PartitionState, DafkaPartitionOrder> partitions_;
  std::atomic<std::size_t> partition_count_{0};
};

// Key encodings of the two column families, exposed for tests and tools.
// partition prefix = len8(subject) subject len8(partition) partition
std::string dafka_partition_prefix(std::string_view subject, std::string_view partition);
std::string dafka_record_key(std::string_view subject, std::string_view partition, std::uint64_t offset);
// Splits a partition prefix (a kDafkaHeads key) into (subject, partition);
// false when key is not exactly one.
bool parse_dafka_partition_prefix(std::string_view key, DafkaPartitionKey* out);

}  // namespace zstore::storage
