#include "server/dafka/dafka_acks.h"

#include <algorithm>
#include <string>

namespace zstore::server {

std::vector<PartitionTouched> partitions_touched(std::span<const storage::DafkaRecordRef> records) {
  std::vector<PartitionTouched> out;
  for (const auto& r : records) {
    auto it = std::find_if(out.begin(), out.end(), [&](const PartitionTouched& p) {
      return p.partition == r.partition && p.subject == r.subject;
    });
    if (it == out.end()) {
      out.push_back({r.subject, r.partition, r.offset});
    } else {
      it->highest = std::max(it->highest, r.offset);
    }
  }
  return out;
}

std::vector<protocol::dafka::Ack> acks_after_batch(std::span<const PartitionTouched> touched, const HeadOf& head_of) {
  std::vector<protocol::dafka::Ack> acks;
  acks.reserve(touched.size());
  for (const auto& p : touched) {
    if (auto head = head_of(p.subject, p.partition)) {
      acks.push_back({std::string(p.partition), std::string(p.subject), *head});
    }
  }
  return acks;
}

}  // namespace zstore::server
