// BatchPriors: internal to ChpStore (chp_store.cc). What each key of a
// write batch held before the batch, read with one MultiGet.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <rocksdb/db.h>

#include "protocol/byte_order.h"
#include "storage/database.h"
#include "storage/status.h"

namespace zstore::storage {

// Whether each key of a batch existed before its write, and with which
// expiry: one MultiGet for the batch, overridden by the batch's own earlier
// writes of the key. The expiry lets a write remove the old index entry in
// the same batch, so the index holds exactly one entry per key with a TTL
// and the sweep meets no stale ones; existence keeps the key count exact.
class BatchPriors {
 public:
  struct Prior {
    bool exists = false;
    std::uint64_t expires_at_ms = 0;
  };

  BatchPriors(Database* db, const std::vector<rocksdb::Slice>& keys)
      : values_(keys.size()), statuses_(keys.size()) {
    db->db()->MultiGet(rocksdb::ReadOptions(), db->handle(Column::kChpMap), keys.size(), keys.data(), values_.data(),
                       statuses_.data());
    in_batch_.reserve(keys.size());
  }

  // n keys known to be absent (no lookup).
  explicit BatchPriors(std::size_t n) : values_(n), statuses_(n, rocksdb::Status::NotFound()) {}

  // Key i (named key) before its write.
  Status before(std::size_t i, const std::string& key, Prior* out) const {
    if (auto it = in_batch_.find(key); it != in_batch_.end()) {
      *out = it->second;
      return Status::Ok();
    }
    *out = {};
    if (statuses_[i].IsNotFound()) return Status::Ok();
    if (!statuses_[i].ok()) return Status::Error("read of the previous entry failed: " + statuses_[i].ToString());
    if (values_[i].size() < 16) return Status::Error("corrupt CHP entry");
    *out = {true, protocol::get_be<std::uint64_t>(std::string_view(values_[i].data() + 8, 8))};
    return Status::Ok();
  }
  void written(const std::string& key, Prior now) { in_batch_[key] = now; }

 private:
  std::vector<rocksdb::PinnableSlice> values_;
  std::vector<rocksdb::Status> statuses_;
  std::unordered_map<std::string, Prior> in_batch_;
};

}  // namespace zstore::storage
