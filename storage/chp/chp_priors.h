// BatchPriors: internal to ChpStore (chp_store.cc). What each key of a
// write batch held before the batch: from the key index where it knows
// whether the key exists, else from one MultiGet of the unknown keys.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <rocksdb/db.h>

#include "storage/chp/chp_entry.h"
#include "storage/chp/chp_key_index.h"
#include "storage/db/database.h"
#include "storage/db/rocks_status.h"
#include "storage/db/status.h"

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
      : known_(keys.size()), read_slot_(keys.size(), kNone), written_(keys.size()) {
    if (!all_absent) read(db, index, keys, fps);
    link_repeats(fps);
  }
  // Keys read from RocksDB (not known to the index).
  std::size_t reads() const { return values_.size(); }
  // Key i before its write. Call it, then written(i), for i = 0, 1, ...
  Status before(std::size_t i, Prior* out) const {
    if (previous_[i] != kNone) {
      *out = written_[previous_[i]];
      return Status::Ok();
    }
    if (known_[i].exists) {
      *out = known_[i];
      return Status::Ok();
    }
    *out = {};
    if (read_slot_[i] == kNone) return Status::Ok();
    const rocksdb::Status& status = statuses_[read_slot_[i]];
    if (status.IsNotFound()) return Status::Ok();
    if (!status.ok()) return from_rocks(status, "read of the previous entry failed");
    const rocksdb::PinnableSlice& value = values_[read_slot_[i]];
    out->exists = true;
    if (!chp_entry_expiry(std::string_view(value.data(), value.size()), &out->expires_at_ms)) {
      return Status::Corruption("corrupt CHP entry");
    }
    return Status::Ok();
  }
  // What key i holds after its write.
  void written(std::size_t i, Prior now) { written_[i] = now; }

 private:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  void read(Database* db, const ChpKeyIndex& index, const std::vector<rocksdb::Slice>& keys,
            const std::vector<std::uint64_t>& fps) {
    std::vector<rocksdb::Slice> unknown;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (i + ChpKeyIndex::kPrefetchAhead < keys.size()) index.prefetch(fps[i + ChpKeyIndex::kPrefetchAhead]);
      if (index.find(fps[i], &known_[i].expires_at_ms)) {
        known_[i].exists = true;
      } else if (!index.complete()) {
        read_slot_[i] = unknown.size();
        unknown.push_back(keys[i]);
      }
    }
    if (unknown.empty()) return;
    values_ = std::vector<rocksdb::PinnableSlice>(unknown.size());
    statuses_.resize(unknown.size());
    db->db()->MultiGet(rocksdb::ReadOptions(), db->handle(Column::kChpMap), unknown.size(), unknown.data(),
                       values_.data(), statuses_.data());
  }

  // previous_[i]: the batch's last write of key i's fingerprint before i,
  // else kNone. An open-addressing table of the batch's fingerprints (they
  // are hashes already), twice the batch's size: no allocation per key.
  void link_repeats(const std::vector<std::uint64_t>& fps) {
    previous_.assign(fps.size(), kNone);
    if (fps.size() < 2) return;
    std::size_t mask = std::bit_ceil(2 * fps.size()) - 1;
    std::vector<std::size_t> last(mask + 1, kNone);
    for (std::size_t i = 0; i < fps.size(); ++i) {
      std::size_t at = static_cast<std::size_t>(fps[i]) & mask;
      while (last[at] != kNone && fps[last[at]] != fps[i]) at = (at + 1) & mask;
      previous_[i] = last[at];
      last[at] = i;
    }
  }

  std::vector<Prior> known_;            // from the index (exists = known)
  std::vector<std::size_t> read_slot_;  // key i's place in values_ and statuses_, else kNone
  std::vector<rocksdb::PinnableSlice> values_;
  std::vector<rocksdb::Status> statuses_;
  std::vector<std::size_t> previous_;
  std::vector<Prior> written_;
};

}  // namespace zstore::storage
