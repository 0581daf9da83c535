// ChpStore's sequence and epochs (chp_store.h, chp_epochs.h): a replica
// adopting or advancing to its active's, a new epoch when a standalone
// server starts, and the synced mark; each written durably.
#include <algorithm>
#include <utility>

#include <rocksdb/write_batch.h>

#include "storage/chp/chp_store.h"
#include "storage/db/slice.h"

namespace zstore::storage {

Status ChpStore::adopt(std::uint64_t sequence, ChpEpochs epochs) {
  if (epochs.empty() || epochs.back().last != sequence) epochs = {{sequence, sequence}};  // unknown past
  rocksdb::WriteBatch batch;
  put_meta(batch, sequence, epochs, sequence, 0);
  Status s = db_->write_durable(batch);
  if (!s.ok()) return s;
  last_sequence_ = sequence;
  epochs_ = std::move(epochs);
  history_from_ = sequence;
  history_count_ = 0;
  return Status::Ok();
}

Status ChpStore::advance_to(std::uint64_t sequence, ChpEpochs epochs) {
  if (sequence <= last_sequence_) return Status::InvalidArgument("advance_to: sequence not above the last one");
  if (epochs.empty() || epochs.back().last != sequence) {
    epochs = epochs_;
    epochs.push_back({sequence, sequence});
  }
  if (epochs.size() > kMaxEpochs) epochs.erase(epochs.begin(), epochs.end() - static_cast<std::ptrdiff_t>(kMaxEpochs));
  rocksdb::WriteBatch batch;
  put_meta(batch, sequence, epochs, history_from_, history_count_);
  Status s = db_->write_durable(batch);
  if (!s.ok()) return s;
  last_sequence_ = sequence;
  epochs_ = std::move(epochs);
  return Status::Ok();
}

Status ChpStore::begin_epoch(std::uint64_t floor, std::uint64_t now_ms, std::uint64_t salt) {
  std::uint64_t base = std::max({last_sequence_, floor, epoch_clock_base(now_ms, salt)});
  if (base <= epochs_.back().base) base = epochs_.back().base + 1;
  ChpEpochs epochs = epochs_;
  epochs.push_back({base, base});
  if (epochs.size() > kMaxEpochs) epochs.erase(epochs.begin());
  rocksdb::WriteBatch batch;  // no sequence between the old last and base: the history stays complete
  put_meta(batch, base, epochs, history_from_, history_count_);
  Status s = db_->write_durable(batch);
  if (!s.ok()) return s;
  last_sequence_ = base;
  epochs_ = std::move(epochs);
  return Status::Ok();
}

Status ChpStore::start_standalone(bool stopped_cleanly, std::uint64_t now_ms, std::uint64_t salt, bool* began) {
  bool new_map = last_sequence_ == 0 && epochs_.size() == 1;
  *began = new_map || !stopped_cleanly;
  if (!*began) return Status::Ok();
  return begin_epoch(0, now_ms, salt);
}

Status ChpStore::set_synced(bool synced) {
  rocksdb::WriteBatch batch;
  batch.Put(db_->handle(Column::kMeta), slice(kMetaChpSynced), synced ? "1" : "0");
  Status s = db_->write_durable(batch);
  if (s.ok()) synced_ = synced;
  return s;
}

}  // namespace zstore::storage
