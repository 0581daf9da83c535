// The Dafka store's ACK policy: after a batch of records is on disk, one
// cumulative ACK per partition the batch touched (not one per record),
// carrying the partition's head, its highest contiguous offset stored, never
// an offset past a gap; a partition with no head yet gets no ACK. Pure
// functions, no sockets, no storage.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "protocol/dafka_messages.h"
#include "storage/dafka/dafka_log.h"

namespace zstore::server {

// A partition a batch touched and the highest offset the batch carried for it.
struct PartitionTouched {
  std::string_view subject;
  std::string_view partition;
  std::uint64_t highest = 0;
};

// The partitions among records, each once, in the order first seen; views
// into records. A batch touches few partitions: a linear search.
std::vector<PartitionTouched> partitions_touched(std::span<const storage::DafkaRecordRef> records);

// The head (highest contiguous offset stored) of a partition, if it has one.
using HeadOf = std::function<std::optional<std::uint64_t>(std::string_view subject, std::string_view partition)>;

// The ACKs to send once the batch that touched these partitions is stored.
std::vector<protocol::dafka::Ack> acks_after_batch(std::span<const PartitionTouched> touched, const HeadOf& head_of);

}  // namespace zstore::server
