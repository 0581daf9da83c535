#include "server/dafka/dafka_limits.h"

namespace zstore::server {

std::string_view to_string(PartitionRefusal refusal) {
  switch (refusal) {
    case PartitionRefusal::kNone:
      return "";
    case PartitionRefusal::kTopics:
      return "topics";
    case PartitionRefusal::kPartitions:
      return "partitions";
    case PartitionRefusal::kPartitionsInTopic:
      return "partitions_per_topic";
    case PartitionRefusal::kNewPartitions:
      return "new_partitions";
  }
  return "";
}

PartitionRefusal PartitionLimits::admit(const PartitionsHeld& held, Clock::time_point now) {
  auto over = [](std::uint64_t limit, std::uint64_t value) { return limit != 0 && value >= limit; };
  if (held.in_topic == 0 && over(config_.max_topics, held.topics)) return PartitionRefusal::kTopics;
  if (over(config_.max_partitions, held.partitions)) return PartitionRefusal::kPartitions;
  if (over(config_.max_partitions_per_topic, held.in_topic)) return PartitionRefusal::kPartitionsInTopic;
  if (now - interval_start_ >= config_.interval) {
    interval_start_ = now;
    new_in_interval_ = 0;
  }
  if (over(config_.max_new_partitions, new_in_interval_)) return PartitionRefusal::kNewPartitions;
  ++new_in_interval_;
  return PartitionRefusal::kNone;
}

}  // namespace zstore::server
