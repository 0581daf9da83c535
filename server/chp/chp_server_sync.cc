// ChpServer's collector batches and WRITE? groups under a WAL sync queue
// (ChpServerConfig::sync_wal): a batch is written unsynced, waits for the
// queue's fsync, and only then is published and answered (WRITTEN), so the
// loop never waits for the disk while another batch or a snapshot has work
// for it. Whatever must not run ahead of a waiting batch (a write that
// publishes by itself, a snapshot or history read) first waits for it
// (publish_unsynced_now), and a HUGZ names the last sequence published:
// nothing a client can see was not durable.
#include <spdlog/spdlog.h>

#include <iterator>

#include "protocol/chp_writes.h"
#include "server/chp/chp_server.h"

namespace zstore::server {

namespace chp = protocol::chp;

// A standalone server's only: in a pair the HA side reads the store's last
// sequence as the one published, and a replica applies as its upstream did.
void ChpServer::start_sync_queue() {
  if (!config_.sync_wal || config_.ha || config_.replica) return;
  wal_sync_ = std::make_unique<WalSyncQueue>(config_.sync_wal);
  poller_.add(
      wal_sync_->fd(), [this] { publish_synced(); }, kPeerState);  // a finished fsync frees its batch first
}

// The batch the loop fills next: the older of two waiting ones is first
// published (its fsync waited for).
ChpServer::CollectorBatch& ChpServer::batch_to_fill() {
  CollectorBatch& b = batches_[next_batch_];
  if (b.ticket != 0) {
    wal_sync_->wait(b.ticket);
    publish_synced();
  }
  return b;
}

void ChpServer::commit_unsynced(CollectorBatch& b) {
  std::span<storage::ChpWrite> writes(b.writes.data(), b.n);
  if (b.n == 0) return clear(b);
  if (!persisted(store_.apply(writes, storage::WriteSync::kByCaller), b.n)) return clear(b);
  b.ticket = wal_sync_->request();
  next_batch_ ^= 1;
}

// A turn's WRITE? group: judged against the map with the waiting batches'
// writes in it (they hold the lower sequences), written unsynced, and
// answered, refusals too, once its fsync returned: no answer names a
// sequence that is not yet durable.
void ChpServer::commit_requests_unsynced() {
  CollectorBatch& b = batch_to_fill();
  std::vector<ChpWriteRequests::Reply> replies;
  b.n = decide_write_requests(&b.writes, &replies);
  if (b.n == 0) return answer_after_waiting(std::move(replies));
  std::span<storage::ChpWrite> group(b.writes.data(), b.n);
  if (!persisted(store_.apply(group, storage::WriteSync::kByCaller), b.n)) {
    auto failed = write_requests_.failed(group, "the store refused the write");
    std::move(failed.begin(), failed.end(), std::back_inserter(replies));
    clear(b);
    return answer_after_waiting(std::move(replies));
  }
  b.replies = std::move(replies);
  auto applied = write_requests_.applied_unsynced(group);
  std::move(applied.begin(), applied.end(), std::back_inserter(b.replies));
  b.ticket = wal_sync_->request();
  next_batch_ ^= 1;
}

// Replies judged against the map as the waiting batches left it: sent
// after the newest of those, or now when none waits.
void ChpServer::answer_after_waiting(std::vector<ChpWriteRequests::Reply> replies) {
  CollectorBatch& newer = batches_[next_batch_ ^ 1];
  CollectorBatch& older = batches_[next_batch_];
  CollectorBatch* last = newer.ticket != 0 ? &newer : (older.ticket != 0 ? &older : nullptr);
  if (last) {
    std::move(replies.begin(), replies.end(), std::back_inserter(last->replies));
    return;
  }
  for (auto& r : replies) answer_write(std::move(r));
}

// A published batch's WRITTENs: an applied write is remembered (a retry is
// answered from memory) only once its fsync returned; after a failed
// fsync its outcome is unknown (the log may hold it), and answered so.
void ChpServer::answer_synced(CollectorBatch& b, bool synced) {
  for (auto& r : b.replies) {
    if (r.outcome.kind == chp::WriteOutcome::Kind::kApplied) {
      if (synced) {
        write_requests_.remember_applied(r.outcome.uuid, r.outcome.sequence);
        metrics_.writes_confirmed.fetch_add(1, std::memory_order_relaxed);
      } else {
        r.outcome = {chp::WriteOutcome::Kind::kUnknown, std::move(r.outcome.uuid), 0,
                     "the fsync failed, the write may be in the log: " + wal_sync_->last_error()};
      }
    }
    answer_write(std::move(r));
  }
}

// The waiting batches in ticket order: when both wait, next_batch_ names
// the older (the one to be filled next once it is published).
void ChpServer::publish_synced() {
  if (!wal_sync_) return;
  wal_sync_->take_signal();
  for (std::size_t k = 0; k < batches_.size(); ++k) {
    CollectorBatch& b = batches_[(next_batch_ + k) % batches_.size()];
    if (b.ticket == 0) continue;
    std::optional<bool> ok = wal_sync_->outcome(b.ticket);
    if (!ok) return;  // the newer one waits behind it
    std::span<storage::ChpWrite> writes(b.writes.data(), b.n);
    if (*ok) {
      announce(writes, std::span<ReceivedMessage>(b.inbox.data(), b.received));
    } else {
      // Its sequences stay used (the log may hold it): none is given twice.
      (void)persisted(storage::Status::IoError(wal_sync_->last_error()), b.n);
    }
    answer_synced(b, *ok);
    clear(b);
  }
}

void ChpServer::publish_unsynced_now() {
  if (!wal_sync_) return;
  for (const CollectorBatch& b : batches_) {
    if (b.ticket != 0) wal_sync_->wait(b.ticket);
  }
  publish_synced();
}

}  // namespace zstore::server
