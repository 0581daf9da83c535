// DafkaStore's batches under a WAL sync queue (DafkaStoreConfig::sync_wal):
// records are written unsynced, and their ACKs (computed from the heads
// right after the write) wait until the queue's fsync made them durable, so
// the loop takes the next batch during the fsync. What reads the log for
// others first waits for every waiting batch (announce_unsynced_now).
#include <spdlog/spdlog.h>

#include "server/dafka/dafka_store.h"

namespace zstore::server {

void DafkaStore::announce_synced() {
  if (!wal_sync_) return;
  wal_sync_->take_signal();
  while (!unsynced_.empty()) {
    std::optional<bool> ok = wal_sync_->outcome(unsynced_.front().ticket);
    if (!ok) return;
    // Taken off first: announcing may give up a gap, which announces what
    // waits behind it (give_up).
    Announcement a = std::move(unsynced_.front());
    unsynced_.pop_front();
    if (*ok) {
      after_store_write("Dafka store", [&] { announce(a); });
    } else {
      // Not ACKed: producers send them again; remembered as gaps meanwhile.
      metrics_.write_failures.fetch_add(a.records, std::memory_order_relaxed);
      refused_since_ok_ += a.records;
      write_error_log_.log(spdlog::level::err, "Dafka: refused {} record(s), not acknowledged: {}", a.records,
                           wal_sync_->last_error());
      for (const auto& [key, highest] : a.seen) gaps_.note_seen(key, highest);
    }
  }
}

void DafkaStore::announce_unsynced_now() {
  if (!wal_sync_ || unsynced_.empty()) return;
  wal_sync_->wait(unsynced_.back().ticket);
  announce_synced();
}

}  // namespace zstore::server
