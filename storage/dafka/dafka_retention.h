// DafkaRetention: one pass of Dafka retention over a DafkaLog. For each
// partition whose topic has limits (DafkaRetentionRules), it finds the
// oldest records beyond them (older than ms by the partition's time marks,
// or over bytes / records counting from the newest) and has the log delete
// them below a new floor (DafkaLog::trim: a range delete; compaction
// reclaims the disk). A partition with nothing left and no append for ms
// is dropped (DafkaLog::drop), so idle partitions leave memory and disk.
// The floor never passes the head: records beyond a gap wait for it.
// Cost: O(partitions / 256) short holds of the log's mutex plus reads of
// the records and marks deleted; meant for a background thread (never a
// reactor). Not thread-safe itself: one caller at a time.
#pragma once

#include <cstdint>

#include "storage/dafka/dafka_log.h"
#include "storage/dafka/dafka_retention_policy.h"
#include "storage/db/status.h"

namespace zstore::storage {

struct DafkaRetentionPass {
  std::uint64_t partitions_seen = 0;
  std::uint64_t partitions_trimmed = 0;
  std::uint64_t records_deleted = 0;
  std::uint64_t bytes_deleted = 0;
  std::uint64_t partitions_dropped = 0;
};

class DafkaRetention {
 public:
  // log and db must outlive this object.
  DafkaRetention(Database* db, DafkaLog* log, DafkaRetentionRules rules)
      : db_(db), log_(log), rules_(std::move(rules)) {}

  // One pass at wall-clock now_ms over every partition. Stops at the first
  // storage error (the next pass tries again).
  Status run(std::int64_t now_ms, DafkaRetentionPass* out);

  const DafkaRetentionRules& rules() const { return rules_; }

 private:
  Status retain(const DafkaPartitionStats& p, std::int64_t now_ms, DafkaRetentionPass* out);
  Status age_floor(const DafkaPartitionStats& p, std::int64_t cutoff_ms, std::uint64_t* floor);

  Database* db_;
  DafkaLog* log_;
  DafkaRetentionRules rules_;
};

}  // namespace zstore::storage
