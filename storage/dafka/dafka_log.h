// DafkaLog: the durable Dafka partition logs on a Database. Records are kept
// in kDafkaRecords under (subject, partition, offset), the consecutive
// records of one append as one entry (a run, dafka_log_internal.h), so one
// partition's records are contiguous and in offset order; kDafkaHeads holds, per
// (subject, partition), a DafkaHeadValue: the next offset expected (head + 1;
// 0 while offset 0 is missing), the floor (lowest offset retention kept),
// the records and content bytes held, and the time of the last append.
// Records after a gap are kept, up to max_ahead offsets past the next
// expected one; the head only advances over contiguous offsets, also over
// records stored earlier once the gap before them is filled. kDafkaTimes
// holds time marks (first offset appended at ms), one per partition every
// mark interval (DafkaRetentionRules), so retention finds records by age.
// Thread-safety: the Dafka store reactor appends and reads; a retention
// thread may call partitions_after(), trim() and drop() at the same time,
// and metrics may read the counters. The writers (append, skip_gap, trim,
// drop) take turns, each writing to RocksDB first and then publishing the
// new state under a mutex held only for that copy: a reader (head(),
// known(), ...) never waits for a write and never sees what is not yet
// written; topic_totals() reads atomics. An append may wait for a trim's
// or drop's small write. Cursors are read by one thread while appends go on.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/dafka/dafka_retention_policy.h"
#include "storage/db/database.h"
#include "storage/db/status.h"

namespace zstore::storage {

struct DafkaRecord {
  std::string subject;
  std::string partition;
  std::uint64_t offset = 0;
  std::string content;
  bool operator==(const DafkaRecord&) const = default;
};

// A record whose bytes live elsewhere (e.g. in the received frames), for
// append() without copying them first.
struct DafkaRecordRef {
  std::string_view subject;
  std::string_view partition;
  std::uint64_t offset = 0;
  std::string_view content;
  DafkaRecordRef() = default;
  DafkaRecordRef(std::string_view s, std::string_view p, std::uint64_t o, std::string_view c)
      : subject(s), partition(p), offset(o), content(c) {}
  DafkaRecordRef(const DafkaRecord& r)
      : subject(r.subject), partition(r.partition), offset(r.offset), content(r.content) {}  // NOLINT
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

// A stored record seen in place: the views stay valid until the next call
// on the cursor that gave it (or the cursor's end).
struct DafkaRecordView {
  std::string_view subject;
  std::string_view partition;
  std::uint64_t offset = 0;
  std::string_view content;
};

// Reads stored records of one partition in ascending offset order, from
// disk (memory does not grow with the range).
class DafkaCursor {
 public:
  virtual ~DafkaCursor() = default;
  // Fills *out with the next record; false at the end of the range or on error.
  virtual bool next(DafkaRecord* out) = 0;
  // The same, without copying the record (a FETCH answer sends it from
  // where the store holds it). By default a copy kept by the cursor.
  virtual bool next_view(DafkaRecordView* out);
  virtual Status status() const = 0;

 private:
  DafkaRecord copy_;  // next_view()'s record when the cursor has no place of its own
};

// One partition as retention sees it (a copy, taken under the log's mutex).
struct DafkaPartitionStats {
  std::string subject;
  std::string partition;
  std::uint64_t next = 0;          // head + 1
  std::uint64_t floor = 0;         // lowest offset not deleted by retention (records below it are gone)
  std::uint64_t records = 0;       // records held (also those beyond a gap)
  std::uint64_t bytes = 0;         // their content bytes
  std::int64_t last_write_ms = 0;  // wall clock of the last append (of the load, for a legacy entry)
  bool gap = false;                // records are held beyond the head
};

struct DafkaTopicTotals {
  std::string topic;
  std::uint64_t partitions = 0;
  std::uint64_t records = 0;
  std::uint64_t bytes = 0;
};

struct DafkaLogOptions {
  std::uint64_t max_ahead = 100000;
  DafkaRetentionRules retention;         // for the interval of time marks
  std::function<std::int64_t()> now_ms;  // wall clock (ms since the epoch); null: the system clock
};

class DafkaLog {
 public:
  static constexpr std::uint64_t kDefaultMaxAhead = 100000;

  // Loads the heads and the records stored beyond them. db must outlive the
  // log. A head entry of the first format (8 bytes: next only) gets floor 0
  // and its counters from one scan of its records, at open.
  static Status Open(Database* db, std::unique_ptr<DafkaLog>* out, std::uint64_t max_ahead = kDefaultMaxAhead);
  static Status Open(Database* db, std::unique_ptr<DafkaLog>* out, DafkaLogOptions options);

  // Highest contiguous offset stored from 0; nullopt while offset 0 is missing.
  std::optional<std::uint64_t> head(std::string_view subject, std::string_view partition) const;
  // Whether anything of this partition is stored (contiguous or not).
  bool known(std::string_view subject, std::string_view partition) const;
  // Lowest offset stored beyond the head (after a gap), if any.
  std::optional<std::uint64_t> first_after_gap(std::string_view subject, std::string_view partition) const;

  // Stores records in one atomic batch together with the advanced heads.
  // *outcomes (resized to records.size()) says what happened to each. On
  // failure nothing is stored and the in-memory state is unchanged.
  // kByCaller: the batch is not fsynced here; the caller syncs the log
  // before it acknowledges the records.
  Status append(std::span<const DafkaRecordRef> records, std::vector<DafkaAppend>* outcomes,
                WriteSync sync = WriteSync::kByPolicy);
  Status append(std::span<const DafkaRecord> records, std::vector<DafkaAppend>* outcomes);

  // Gives up on the missing offsets before the first record kept after a
  // gap: the head moves to that record and over every contiguous record
  // stored after it, persisted. *skipped = how many offsets were given up
  // (0, and nothing written, when the partition has no gap). A FETCH of
  // the skipped offsets later returns the records that exist.
  Status skip_gap(std::string_view subject, std::string_view partition, std::uint64_t* skipped);

  // Lowest offset retention kept (0 for an unknown partition). A FETCH
  // below it is answered from it on.
  std::uint64_t floor(std::string_view subject, std::string_view partition) const;

  // Up to limit partitions after `after` (from the first when null), in
  // key order. Thread-safe; costs O(limit + log partitions) under the mutex.
  std::vector<DafkaPartitionStats> partitions_after(const DafkaPartitionKey* after, std::size_t limit) const;

  // Retention: deletes (one RocksDB range delete, with the time marks)
  // every record below new_floor and persists the floor with the counters
  // minus removed_records / removed_bytes, atomically. Applied only if the
  // partition still has seen.floor as its floor and new_floor <= its next
  // (*applied says). Thread-safe.
  Status trim(const DafkaPartitionStats& seen, std::uint64_t new_floor, std::uint64_t removed_records,
              std::uint64_t removed_bytes, bool* applied);
  // Retention of an idle partition: removes it (head, records, marks) from
  // disk and memory if it is still as seen: nothing held below or beyond
  // its head and no append since. Thread-safe.
  Status drop(const DafkaPartitionStats& seen, bool* applied);

  // Per topic: partitions, records and content bytes held (maintained
  // counters, no scan). Thread-safe; never waits for a write or a trim.
  std::vector<DafkaTopicTotals> topic_totals() const;
  // Topics held, and the partitions of one (0 for a topic not held), from
  // the same counters. Thread-safe.
  std::size_t topic_count() const;
  std::uint64_t partitions_of(std::string_view topic) const;
  // Records deleted by trim() and partitions removed by drop() since open. Thread-safe.
  std::uint64_t records_retained_away() const { return retained_away_.load(std::memory_order_relaxed); }
  std::uint64_t partitions_dropped() const { return dropped_.load(std::memory_order_relaxed); }
  std::int64_t now_ms() const;

  // Records of a partition with offsets in [from, from + count), ascending;
  // offsets not stored, and those below the floor, are skipped.
  std::unique_ptr<DafkaCursor> read(std::string_view subject, std::string_view partition, std::uint64_t from,
                                    std::uint64_t count);

  // Partitions of exactly this subject that have a head.
  std::vector<DafkaHead> heads(std::string_view subject) const;

  std::uint64_t max_ahead() const { return options_.max_ahead; }
  // Partitions known, from an atomic (metrics).
  std::size_t partition_count() const { return partition_count_.load(std::memory_order_relaxed); }

 private:
  struct PartitionState {
    std::uint64_t next = 0;  // head + 1
    std::uint64_t floor = 0;
    std::uint64_t records = 0;
    std::uint64_t bytes = 0;
    std::int64_t last_write_ms = 0;
    std::int64_t last_mark_ms = 0;   // not persisted: a restart writes a new mark
    std::set<std::uint64_t> beyond;  // offsets stored above next
  };
  struct AppendPlan;
  explicit DafkaLog(Database* db, DafkaLogOptions options);
  Status load();
  Status load_partition(const DafkaPartitionKey& key, std::string_view value, PartitionState* state);
  const PartitionState* find(std::string_view subject, std::string_view partition) const;
  void plan_records(std::span<const DafkaRecordRef> records, AppendPlan* plan, std::vector<DafkaAppend>* outcomes);
  void put_runs(AppendPlan* plan);
  void plan_heads(AppendPlan* plan);
  void apply_plan(const AppendPlan& plan);
  // One topic's counters, read by metrics without a lock.
  struct TopicCounters {
    explicit TopicCounters(std::string t) : topic(std::move(t)) {}
    std::string topic;
    std::atomic<std::uint64_t> partitions{0};
    std::atomic<std::uint64_t> records{0};
    std::atomic<std::uint64_t> bytes{0};
  };
  using TopicList = std::vector<std::shared_ptr<TopicCounters>>;  // in topic order
  // Moves a topic's counters (mu_ held); true when a topic came or went
  // (then publish_topics()).
  bool count(const std::string& topic, std::int64_t partitions, std::int64_t records, std::int64_t bytes);
  void publish_topics();  // mu_ held
  std::shared_ptr<const TopicList> topic_list() const;

  Database* db_;
  DafkaLogOptions options_;
  // Held by a writer from its plan to its publication, across its RocksDB
  // write: writers read partitions_ under it alone, and never take it from mu_.
  std::mutex write_mu_;
  // Guards partitions_ and topics_: changed with both locks held, read by
  // readers under this one; never held across a RocksDB call.
  mutable std::mutex mu_;
  std::map<DafkaPartitionKey, PartitionState, DafkaPartitionOrder> partitions_;
  std::map<std::string, std::shared_ptr<TopicCounters>, std::less<>> topics_;
  mutable std::mutex published_mu_;  // guards published_ (a pointer swap)
  std::shared_ptr<const TopicList> published_;
  std::atomic<std::size_t> partition_count_{0};
  std::atomic<std::uint64_t> retained_away_{0};
  std::atomic<std::uint64_t> dropped_{0};
};

// The kDafkaHeads value: next, floor, records, bytes, last_write_ms, each
// u64 BE (40 bytes). The first format was next alone (8 bytes): decoded
// with has_counters false.
struct DafkaHeadValue {
  std::uint64_t next = 0;
  std::uint64_t floor = 0;
  std::uint64_t records = 0;
  std::uint64_t bytes = 0;
  std::int64_t last_write_ms = 0;
  bool has_counters = true;
};
std::string encode_dafka_head(const DafkaHeadValue& v);
bool decode_dafka_head(std::string_view bytes, DafkaHeadValue* out);

// Key encodings of the two column families, exposed for tests and tools.
// partition prefix = len8(subject) subject len8(partition) partition
std::string dafka_partition_prefix(std::string_view subject, std::string_view partition);
std::string dafka_record_key(std::string_view subject, std::string_view partition, std::uint64_t offset);
// Splits a partition prefix (a kDafkaHeads key) into (subject, partition);
// false when key is not exactly one.
bool parse_dafka_partition_prefix(std::string_view key, DafkaPartitionKey* out);
// Splits a kDafkaRecords key (one record's, or a run's) into its partition
// and the offset of the entry's last record; false when key is not one.
bool parse_dafka_record_key(std::string_view key, DafkaPartitionKey* partition, std::uint64_t* last_offset);

}  // namespace zstore::storage
