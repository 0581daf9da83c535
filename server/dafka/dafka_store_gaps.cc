// DafkaStore: the gaps of its partitions, found from HEADs and records kept
// past a missing offset, FETCHed from their producers and given up after
// their retries; and the ACK a HEAD at our head gets again.
#include <spdlog/spdlog.h>

#include "server/dafka/dafka_store.h"

namespace zstore::server {

namespace dafka = protocol::dafka;

// A HEAD at or below our head: its producer may have missed our ACK (it
// learnt our publisher after we sent it), so it gets our head again, at
// most once per kHeadAckInterval per partition.
void DafkaStore::on_head(const dafka::Head& head) {
  Key key(head.subject, head.partition);
  auto ours = log_.head(head.subject, head.partition);
  if (ours && head.sequence <= *ours) {
    auto now = Clock::now();
    auto [it, fresh] = head_acked_.try_emplace(key, now);
    if (!fresh && now - it->second < kHeadAckInterval) return;
    it->second = now;
    if (send(dafka::encode(dafka::Ack{head.partition, head.subject, *ours}))) {
      metrics_.acks_sent.fetch_add(1, std::memory_order_relaxed);
    }
    return;
  }
  // An unknown partition would be FETCHed and tracked: a new partition too.
  if (!ours && !gaps_.tracked(key) && !admit(head.subject, head.partition, nullptr)) return;
  gaps_.note_seen(key, head.sequence);
  request_missing(key, false);
}

// FETCHes the first missing range of a partition (GapTracker says which
// and when), or gives it up.
void DafkaStore::request_missing(const Key& key, bool from_timer) {
  if (!gaps_.tracked(key)) return;
  auto head = log_.head(key.first, key.second);
  std::uint64_t from = head ? *head + 1 : 0;
  auto now = Clock::now();
  GapTracker::Range missing;
  switch (gaps_.next(key, from, log_.first_after_gap(key.first, key.second), from_timer, now, &missing)) {
    case GapTracker::Action::kNone:
      return;
    case GapTracker::Action::kGiveUp:
      return give_up(key, missing);
    case GapTracker::Action::kFetch:
      break;
  }
  std::uint64_t count = std::min<std::uint64_t>(
      {missing.end - missing.from, log_.max_ahead(), std::numeric_limits<std::uint32_t>::max()});
  if (!send(dafka::encode(
          dafka::Fetch{key.second, address_, key.first, missing.from, static_cast<std::uint32_t>(count)}))) {
    return;
  }
  metrics_.fetches_sent.fetch_add(1, std::memory_order_relaxed);
  gaps_.asked(key, missing.from, from_timer, now);
}

// A gap still open after max_fetch_retries FETCHes is given up by policy
// rather than wedging its partition: the head moves to the first record kept
// after it (ACKed, and the next gap, if any, is asked for). A gap known only
// from a HEAD (nothing kept after it) is forgotten until the next HEAD.
void DafkaStore::give_up(const Key& key, GapTracker::Range missing) {
  announce_unsynced_now();  // its ACK names the head, which must be durable
  std::uint64_t skipped = 0;
  storage::Status s = log_.skip_gap(key.first, key.second, &skipped);
  if (!s.ok()) {
    write_error_log_.log(spdlog::level::err, "Dafka store: skipping a gap: {}", s.message());
    return;  // the next timer tries again
  }
  if (skipped == 0) {
    gap_log_.log(spdlog::level::info,
                 "Dafka partition {} of '{}': no answer for offsets {}..{} after {} FETCHes; waiting for its next HEAD",
                 key.second, key.first, missing.from, missing.end - 1, config_.max_fetch_retries);
    gaps_.forget(key);
    return;
  }
  metrics_.gaps_skipped.fetch_add(1, std::memory_order_relaxed);
  metrics_.offsets_skipped.fetch_add(skipped, std::memory_order_relaxed);
  gap_log_.log(spdlog::level::warn,
               "Dafka partition {} of '{}': offsets {}..{} still missing after {} FETCHes: skipped, head now {}",
               key.second, key.first, missing.from, missing.from + skipped - 1, config_.max_fetch_retries,
               log_.head(key.first, key.second).value_or(0));
  gaps_.reset_retries(key);
  const PartitionTouched skipped_partition[] = {{key.first, key.second, 0}};
  announce(announcement(skipped_partition, 0));
}

}  // namespace zstore::server
