// BatchPriors: internal to ChpStore (chp_store.cc). What each key of a
// write batch held before the batch: from the key index where it knows
// whether the key exists, else from one MultiGet of the unknown keys.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <rocksdb/db.h>

#include "storage/chp_entry.h"
#include "storage/chp_key_index.h"
#include "storage/database.h"
#include "storage/status.h"

namespace zstore::storage {

// Whether each key of a batch existed before its write, and with which
// expiry, overridden by the batch's own earlier writes of the key. The
// expiry lets a write remove the old TTL index entry in the same batch, so
// the index holds exactly one entry per key with a TTL and the sweep meets
// no stale ones; existence keeps the key count exact. Keys are told apart
// by their fingerprints (chp_key_index.h).
class BatchPriors {
 public:
  struct Prior {
    bool exists = false;
    std::uint64_t expires_at_ms = 0;
  };

  // fps[i] is keys[i]'s fingerprint. all_absent: none of the keys is in the
  // map (no lookup at all).
  BatchPriors(Database* db, const ChpKeyIndex& index, const std::vector<rocksdb::Slice>& keys,
              const std::vector<std::uint64_t>& fps, bool all_absent = false)
      : known_(keys.size()), values_(keys.size()), statuses_(keys.size(), rocksdb::Status::NotFound()) {
    if (!all_absent) read(db, index, keys, fps);
    in_batch_.reserve(keys.size());
  }

  // Keys read from RocksDB (not known to the index).
  std::size_t reads() const { return reads_; }

  // Key i (fingerprint fp) before its write.
  Status before(std::size_t i, std::uint64_t fp, Prior* out) const {
    if (auto it = in_batch_.find(fp); it != in_batch_.end()) {
      *out = it->second;
      return Status::Ok();
    }
    if (known_[i].exists) {
      *out = known_[i];
      return Status::Ok();
    }
    *out = {};
    if (statuses_[i].IsNotFound()) return Status::Ok();
    if (!statuses_[i].ok()) return Status::Error("read of the previous entry failed: " + statuses_[i].ToString());
    out->exists = true;
    if (!chp_entry_expiry(std::string_view(values_[i].data(), values_[i].size()), &out->expires_at_ms)) {
      return Status::Error("corrupt CHP entry");
    }
    return Status::Ok();
  }
  void written(std::uint64_t fp, Prior now) { in_batch_[fp] = now; }

 private:
  void read(Database* db, const ChpKeyIndex& index, const std::vector<rocksdb::Slice>& keys,
            const std::vector<std::uint64_t>& fps) {
    std::vector<rocksdb::Slice> unknown;
    std::vector<std::size_t> at;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (index.find(fps[i], &known_[i].expires_at_ms)) {
        known_[i].exists = true;
      } else if (!index.complete()) {
        unknown.push_back(keys[i]);
        at.push_back(i);
      }
    }
    reads_ = unknown.size();
    if (unknown.empty()) return;
    std::vector<rocksdb::PinnableSlice> values(unknown.size());
    std::vector<rocksdb::Status> statuses(unknown.size());
    db->db()->MultiGet(rocksdb::ReadOptions(), db->handle(Column::kChpMap), unknown.size(), unknown.data(),
                       values.data(), statuses.data());
    for (std::size_t j = 0; j < at.size(); ++j) {
      values_[at[j]] = std::move(values[j]);
      statuses_[at[j]] = statuses[j];
    }
  }

  std::vector<Prior> known_;  // from the index (exists = known)
  std::vector<rocksdb::PinnableSlice> values_;
  std::vector<rocksdb::Status> statuses_;
  std::unordered_map<std::uint64_t, Prior> in_batch_;
  std::size_t reads_ = 0;
};

}  // namespace zstore::storage
