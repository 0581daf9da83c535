// Dafka retention limits, per partition, like Kafka's retention.ms /
// retention.bytes and JetStream's max_age / max_bytes / max_msgs: a record
// goes once it is older than ms, or once the partition holds more than
// bytes of content or more than records records (the oldest first). 0 =
// no limit of that kind. Rules pick the limits of a topic by its longest
// matching prefix, else the defaults. Plain values, no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace zstore::storage {

struct DafkaRetentionPolicy {
  std::uint64_t ms = 0;
  std::uint64_t bytes = 0;
  std::uint64_t records = 0;
  bool unlimited() const { return ms == 0 && bytes == 0 && records == 0; }
  bool operator==(const DafkaRetentionPolicy&) const = default;
};

struct DafkaRetentionRules {
  DafkaRetentionPolicy defaults;
  // (topic prefix, limits); the longest prefix that starts the topic wins.
  std::vector<std::pair<std::string, DafkaRetentionPolicy>> overrides;

  const DafkaRetentionPolicy& lookup(std::string_view topic) const {
    const DafkaRetentionPolicy* best = &defaults;
    std::size_t best_len = 0;
    for (const auto& [prefix, policy] : overrides) {
      if (topic.starts_with(prefix) && (best == &defaults || prefix.size() > best_len)) {
        best = &policy;
        best_len = prefix.size();
      }
    }
    return *best;
  }

  // Interval of a partition's time marks (dafka_log.h): 1 % of its age
  // limit, at least 1 s; 1 h without one. Records are deleted at most this
  // late.
  std::uint64_t mark_interval_ms(std::string_view topic) const {
    std::uint64_t ms = lookup(topic).ms;
    if (ms == 0) return 3'600'000;
    return ms / 100 < 1000 ? 1000 : ms / 100;
  }
};

}  // namespace zstore::storage
