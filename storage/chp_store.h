// ChpStore: the durable CHP hashmap on a Database. It owns the sequence
// counter: apply() gives each write the next sequence and persists entries,
// their expiry index and the new last sequence in one atomic batch, so a
// sequence is never reused after a restart. Not thread-safe: one owner
// thread (the CHP reactor) calls everything; snapshot cursors may be read
// from that same thread while writes continue.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "storage/chp_entry.h"
#include "storage/database.h"
#include "storage/status.h"

namespace zstore::storage {

inline constexpr std::string_view kMetaChpLastSequence = "chp_last_sequence";
inline constexpr std::string_view kMetaChpSynced = "chp_synced";

// Sequences are (epoch << kEpochShift) | counter; a new active server starts
// a new epoch so its sequences exceed anything its predecessor published.
inline constexpr unsigned kEpochShift = 40;

struct ChpWrite {
  std::string key;
  std::string uuid;
  std::string properties;
  std::string value;                // empty = delete the key
  std::uint64_t expires_at_ms = 0;  // absolute; 0 = no expiry
  std::uint64_t sequence = 0;       // in: 0 = assign next; out: the sequence used
};

// A key and its entry, as read from a snapshot.
struct ChpRecord {
  std::string key;
  ChpEntry entry;
};

// Iterates a consistent point-in-time view of the keys under a prefix, in
// key order, reading from disk (memory does not grow with the map).
class ChpSnapshotCursor {
 public:
  virtual ~ChpSnapshotCursor() = default;
  // The last sequence applied when the view was taken.
  virtual std::uint64_t sequence() const = 0;
  // Fills *out with the next record; false at the end or on error.
  virtual bool next(ChpRecord* out) = 0;
  // Ok unless iteration stopped on a read error or a corrupt entry.
  virtual Status status() const = 0;
};

class ChpStore {
 public:
  // Loads the last sequence from db. db must outlive the store.
  static Status Open(Database* db, std::unique_ptr<ChpStore>* out);

  std::uint64_t last_sequence() const { return last_sequence_; }

  // Applies writes in order as one atomic batch. Writes with sequence 0 get
  // last_sequence()+1, +2, ...; explicit sequences (a follower copying its
  // leader) must be above last_sequence() and increasing. On failure nothing
  // is applied and the counter is unchanged.
  Status apply(std::span<ChpWrite> writes);

  // Reads one key; *found tells whether it exists.
  Status get(std::string_view key, ChpEntry* entry, bool* found);

  std::unique_ptr<ChpSnapshotCursor> snapshot(std::string_view prefix);

  // Keys whose expiry is <= now_ms, oldest first, at most limit of them,
  // each with the expiry found in the index. apply() removes a key's old
  // index entry when it rewrites or deletes the key; stale entries an older
  // zstore left behind are removed on the way. The scan starts at the
  // lowest expiry that can still be live (remembered from the last sweep,
  // lowered by writes), so it costs O(keys due), not O(entries deleted).
  struct Due {
    std::string key;
    std::uint64_t expires_at_ms;
  };
  Status due_expiries(std::uint64_t now_ms, std::size_t limit, std::vector<Due>* out);

  // Deletes every key, keeping the sequence counter: a follower replacing
  // its map with its leader's snapshot.
  Status clear();

  // Stores records as they are (their own sequence and expiry), without
  // touching the counter: a follower loading its leader's snapshot.
  Status load(std::span<const ChpRecord> records);

  // Adopts sequence as the last one (a follower taking its leader's).
  Status reset_sequence(std::uint64_t sequence);

  // Moves the counter to the start of the next epoch (see kEpochShift).
  Status begin_epoch();

  // Whether this map is a complete copy (false while a follower reloads).
  Status set_synced(bool synced);
  bool synced() const { return synced_; }

 private:
  explicit ChpStore(Database* db) : db_(db) {}
  Status write_sequence(std::uint64_t sequence);
  Status drop_old_expiry(rocksdb::WriteBatch& batch, const std::string& key,
                         const std::unordered_map<std::string, std::uint64_t>& in_batch);

  Database* db_;
  std::uint64_t last_sequence_ = 0;
  bool synced_ = true;
  bool may_have_ttls_ = false;      // false: no key has a TTL, apply() skips the old-entry lookup
  std::uint64_t sweep_floor_ms_ = 0;  // no live index entry below it
};

}  // namespace zstore::storage
