// ChpOutcomes: the uuid and sequence of the last writes whose outcome a
// server must still know after a restart (ChpWrite::remember_outcome: a
// confirmed WRITE?, or every update an HA passive stores from its active),
// kept in the meta column family in the batch that applies them. A retry
// of such a write after a crash, a power cut or a failover is then
// answered "applied" at its sequence instead of being judged again (and
// refused, or applied twice). The last `capacity` outcomes, and at most one
// batch's more, are kept; older ones are deleted in later batches.
//   meta key: "chp_outcomes/" | entry number u64 BE (one more than the last)
//   value:    (sequence u64 BE | uuid, 16 bytes)*
// Not thread-safe: the store's owner.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/db/status.h"

namespace rocksdb {
class WriteBatch;
}

namespace zstore::storage {

class Database;
struct ChpWrite;  // chp_store.h

inline constexpr std::string_view kMetaChpOutcomesPrefix = "chp_outcomes/";
inline constexpr std::size_t kOutcomeUuidBytes = 16;
inline constexpr std::size_t kDefaultRememberedOutcomes = 65536;

class ChpOutcomes {
 public:
  struct Outcome {
    std::array<char, kOutcomeUuidBytes> uuid;
    std::uint64_t sequence = 0;
    std::string_view uuid_view() const { return {uuid.data(), uuid.size()}; }
  };

  explicit ChpOutcomes(std::size_t capacity = kDefaultRememberedOutcomes) : capacity_(capacity) {}

  // Reads every kept outcome from meta, oldest first (loaded()).
  Status load(Database* db);
  // What load() read, oldest first; take it once (it is moved out).
  std::vector<Outcome> take_loaded() { return std::move(loaded_); }
  // Adds to batch an entry for the writes (sequences assigned) that
  // remember_outcome or, with all, every write with a 16-byte uuid, and
  // the deletes of the oldest entries beyond capacity. Takes effect at
  // committed(); a put() without it (a failed batch) is forgotten at the
  // next put().
  void put(rocksdb::WriteBatch& batch, Database* db, std::span<const ChpWrite> writes, bool all);
  // The batch of the last put() was written.
  void committed();
  // How many outcomes the kept entries hold.
  std::size_t kept() const { return kept_; }

 private:
  struct Entry {
    std::string key;
    std::size_t count;
  };
  std::size_t capacity_;
  std::deque<Entry> entries_;  // oldest first
  std::size_t kept_ = 0;
  std::vector<Outcome> loaded_;
  std::uint64_t next_number_ = 1;  // the next entry's
  // put()'s, until committed()
  Entry staged_{{}, 0};
  std::size_t staged_drops_ = 0;
  std::string value_;  // put()'s value buffer, kept
};

}  // namespace zstore::storage
