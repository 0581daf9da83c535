// ChpHistory: the chp_history column family, every update the CHP map
// applied (deletes and expiries included) keyed by its sequence, so a
// member of a pair can hand its peer what the peer lacks, deletes
// included, and a client can resume. Bounded by entry count and optionally
// by age: the oldest entries are trimmed (see ChpStore).
//
// The column holds entries keyed by the sequence of their last update, so
// a Seek to a sequence finds the entry holding it and a range delete below
// a sequence removes exactly the entries wholly below:
//   sequence u64 BE                         -> one update (layout 1)
//   last sequence u64 BE | kBlockTag        -> updates as PackedValues
//                                              (packed_values.h) (layout 2)
//   last sequence u64 BE | kRefBlockTag     -> updates as PackedValues, each
//                                              with a kind byte (layout 3)
//   last sequence u64 BE | kCompactBlockTag -> count u32 BE, then the
//                                              updates back to back (layout 4)
// An update of layouts 1 and 2 is
//   written_ms u64 BE (when the update reached the pair, 0 unknown) |
//   key_len u32 BE | key | chp_map entry (chp_entry.h; empty value = the
//   key was deleted; its sequence is the update's)
// one of layout 3 is
//   written_ms u64 BE | key_len u32 BE | key | kind u8 | then
//   kind 0 (a delete or an expiry): its chp_map entry, as above;
//   kind 1 (a set): sequence u64 BE | uuid_len u8 | uuid. The value stays
//   in chp_map only, so a set's bytes are written once, not twice; the
//   history serves it while chp_map still holds that sequence for the key.
// and one of layout 4, which this build writes, is (varints and zigzag as
// in varint.h; "previous" is the block's update before, 0 for its first)
//   kind u8 | varint sequence - previous sequence (> 0) |
//   varint zigzag(written_ms - previous written_ms) | varint key_len | key |
//   kind 0: varint entry_len | chp_map entry (its sequence the update's);
//   kind 1 (a set): nothing more: its sequence, uuid and value are read
//   from chp_map, as in layout 3.
// About 20 bytes per set with 16-byte keys instead of layout 3's 58, so
// each write adds that much less to the write-ahead log, the memtable and
// the flushes. The last update's
// sequence is the entry's key.
// A block holds updates of one ChpStore::apply, at most
// kMaxHistoryBlockBytes and the history's trim slack of updates.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "storage/chp/chp_entry.h"
#include "storage/chp/chp_store.h"
#include "storage/db/packed_values.h"

namespace rocksdb {
class WriteBatch;
}

namespace zstore::storage {

class Database;
class ChpSnapshotCursor;

inline constexpr char kHistoryBlockTag = 0x01;
inline constexpr char kHistoryRefBlockTag = 0x02;
inline constexpr char kHistoryCompactBlockTag = 0x03;
inline constexpr std::size_t kMaxHistoryBlockBytes = 64 << 10;

// Gathers the updates of one apply into history entries (layout 4 blocks):
// add() each in sequence order, then finish() puts what is left. A block
// holds at most max_updates updates (the history's trim slack: trims drop
// whole entries, so the history stays within its bound and slack).
// Reusable.
class HistoryWriter {
 public:
  // Blocks of at most max_updates, built in *buffer (kept by the caller so
  // that its capacity is reused batch to batch; at most a block's).
  HistoryWriter(std::uint64_t max_updates, std::string* buffer) : max_updates_(max_updates), block_(*buffer) {
    block_.clear();
  }
  // Adds one sequenced update (sequences ascending), putting the block so
  // far first when it would outgrow kMaxHistoryBlockBytes. A set
  // (non-empty value) is written as a reference to its chp_map entry,
  // which must be in the same batch.
  void add(rocksdb::WriteBatch& batch, Database* db, const ChpWrite& write);
  void finish(rocksdb::WriteBatch& batch, Database* db);

 private:
  std::uint64_t max_updates_;
  std::string& block_;  // count placeholder, then the updates
  std::uint32_t count_ = 0;
  std::uint64_t last_sequence_ = 0;
  std::uint64_t last_ms_ = 0;
};

// What trimming needs of one history entry: how many updates it holds, the
// sequence of the last and, if newest, the newest written_ms among them
// (else 0: a block's updates are not read); false when the entry is
// malformed.
struct HistoryEntryInfo {
  std::uint64_t count = 0;
  std::uint64_t last = 0;
  std::uint64_t newest_ms = 0;
};
bool history_entry_info(std::string_view key, std::string_view value, bool newest, HistoryEntryInfo* out);

// One update as stored. For a reference (a set of layouts 3 and 4),
// entry holds only its sequence and, in layout 3, its uuid: the rest is in
// chp_map.
struct HistoryUpdate {
  std::uint64_t written_ms = 0;
  std::string_view key;
  bool reference = false;
  ChpEntryView entry;
};

// Reads the updates of one chp_history entry of any layout, in order, as
// views into the entry's bytes (which must outlive the reader).
class HistoryEntryReader {
 public:
  // Starts on an entry; false when its key is no history key or its value
  // holds no update.
  bool open(std::string_view key, std::string_view value);
  // Updates not yet read.
  std::uint64_t left() const { return left_; }
  // The next update; false when none is left or the bytes are malformed
  // (then done() is false).
  bool next(HistoryUpdate* out);
  // Every update was read, no byte is left over and, in layout 4, the last
  // one's sequence is the key's.
  bool done() const;

 private:
  enum class Layout { kSingle, kPacked, kTagged, kCompact };
  bool next_compact(HistoryUpdate* out);

  Layout layout_ = Layout::kSingle;
  std::uint64_t last_ = 0;  // the key's sequence
  std::uint64_t left_ = 0;
  std::string_view rest_;       // kSingle, kCompact: the bytes not yet read
  PackedValues packed_;         // kPacked, kTagged
  std::uint64_t sequence_ = 0;  // kCompact: the previous update's
  std::uint64_t ms_ = 0;
  bool broken_ = false;  // an update was malformed
};

// What a history cursor gives for a set stored as a reference.
enum class HistoryValues {
  // Its chp_map entry, read at the cursor's point in time: a set whose key
  // was later overwritten is skipped (the later update follows), and one
  // whose key was later deleted comes as a delete without UUID, with
  // ChpRecord::superseded set (the key's later delete or expiry follows),
  // so the updates given leave a map in the state the history leads to. A
  // delete does not carry the set's UUID: a UUID names the update
  // published under it, and this one published a value.
  kResolved,
  // Only its key, sequence and written_ms (and its uuid in entries of
  // layout 3), with ChpRecord::value_omitted set: every update, none read
  // from chp_map.
  kOmitted,
};

// A cursor over the history updates with sequence > after and a key that
// starts with prefix, in sequence order, at a consistent point in time;
// sequence() reports `last`. It pauses (ChpSnapshotCursor::paused) after
// skipping a few thousand updates, so no call runs long.
std::unique_ptr<ChpSnapshotCursor> history_cursor(Database* db, std::uint64_t after, std::uint64_t last,
                                                  std::string_view prefix = {},
                                                  HistoryValues values = HistoryValues::kResolved);

}  // namespace zstore::storage
