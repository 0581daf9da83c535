// PartitionLimits: which new partitions the Dafka store takes, so no
// producer can grow its memory and disk without bound (issue 53: 200,000
// partitions cost 131 MiB, 50,000 topics 205 MiB). A partition the log
// already holds always passes; a new one must stay within the topics in
// total, the partitions in total and in its topic, and the new partitions
// of the current interval (a RECORD names its partition, the producer's
// address, itself: a hostile producer is a new producer per partition, so
// the rate is the store's, not one per publisher). 0 means no limit of
// that kind. Pure: no sockets, no storage; owned by one reactor thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

namespace zstore::server {

struct PartitionLimitsConfig {
  std::uint64_t max_topics = 10000;
  std::uint64_t max_partitions = 100000;
  std::uint64_t max_partitions_per_topic = 50000;
  std::uint64_t max_new_partitions = 1000;  // per interval
  std::chrono::milliseconds interval{1000};
};

// What is held (in the log and admitted but not yet stored) when a new
// partition asks to be taken.
struct PartitionsHeld {
  std::uint64_t topics = 0;
  std::uint64_t partitions = 0;
  std::uint64_t in_topic = 0;  // 0: its topic is new too
};

enum class PartitionRefusal : std::uint8_t { kNone, kTopics, kPartitions, kPartitionsInTopic, kNewPartitions };

// The label of a refusal in /metrics and the log ("topics", ...); "" for kNone.
std::string_view to_string(PartitionRefusal refusal);

class PartitionLimits {
 public:
  using Clock = std::chrono::steady_clock;
  explicit PartitionLimits(PartitionLimitsConfig config) : config_(config) {}

  // kNone when a new partition may be taken now (it then counts against
  // this interval's new partitions), else the first limit it would pass.
  PartitionRefusal admit(const PartitionsHeld& held, Clock::time_point now);

  const PartitionLimitsConfig& config() const { return config_; }

 private:
  PartitionLimitsConfig config_;
  Clock::time_point interval_start_{};
  std::uint64_t new_in_interval_ = 0;
};

}  // namespace zstore::server
