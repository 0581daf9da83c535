// ChpHistory: the chp_history column family, every update the CHP map
// applied (deletes and expiries included) keyed by its sequence, so a
// member of a pair can hand its peer what the peer lacks, deletes
// included, and a client can resume. Bounded by entry count and optionally
// by age: the oldest entries are trimmed (see ChpStore).
//
// The column holds entries keyed by the sequence of their last update, so
// a Seek to a sequence finds the entry holding it and a range delete below
// a sequence removes exactly the entries wholly below:
//   sequence u64 BE                     -> one update (layout 1)
//   last sequence u64 BE | kBlockTag    -> updates as PackedValues
//                                          (packed_values.h) (layout 2)
//   last sequence u64 BE | kRefBlockTag -> updates as PackedValues, each
//                                          with a kind byte (layout 3)
// An update of layouts 1 and 2 is
//   written_ms u64 BE (when the update reached the pair, 0 unknown) |
//   key_len u32 BE | key | chp_map entry (chp_entry.h; empty value = the
//   key was deleted; its sequence is the update's)
// and one of layout 3, which this build writes, is
//   written_ms u64 BE | key_len u32 BE | key | kind u8 | then
//   kind 0 (a delete or an expiry): its chp_map entry, as above;
//   kind 1 (a set): sequence u64 BE | uuid_len u8 | uuid. The value stays
//   in chp_map only, so a set's bytes are written once, not twice; the
//   history serves it while chp_map still holds that sequence for the key.
// A block holds updates of one ChpStore::apply, at most
// kMaxHistoryBlockBytes and the history's trim slack of updates.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "storage/chp_entry.h"
#include "storage/chp_store.h"

namespace rocksdb {
class WriteBatch;
}

namespace zstore::storage {

class Database;
class ChpSnapshotCursor;

inline constexpr char kHistoryBlockTag = 0x01;
inline constexpr char kHistoryRefBlockTag = 0x02;
inline constexpr std::size_t kMaxHistoryBlockBytes = 64 << 10;

// Gathers the updates of one apply into history entries (layout 3 blocks):
// add() each in sequence order, then finish() puts what is left. A block
// holds at most max_updates updates (the history's trim slack: trims drop
// whole entries, so the history stays within its bound and slack).
// Reusable.
class HistoryWriter {
 public:
  explicit HistoryWriter(std::uint64_t max_updates) : max_updates_(max_updates) {}
  // Adds one update, putting the block so far first when it would outgrow
  // kMaxHistoryBlockBytes. A set (non-empty value) is written as a
  // reference to its chp_map entry, which must be in the same batch.
  void add(rocksdb::WriteBatch& batch, Database* db, std::uint64_t sequence, std::uint64_t written_ms,
           std::string_view key, const ChpEntryPieces& entry);
  void finish(rocksdb::WriteBatch& batch, Database* db);

 private:
  std::uint64_t max_updates_;
  std::string block_;  // count placeholder, then length-prefixed updates
  std::uint32_t count_ = 0;
  std::uint64_t last_sequence_ = 0;
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

// One update as stored. For a reference (a layout-3 set), entry holds only
// its sequence and uuid: the rest is in chp_map.
struct HistoryUpdate {
  std::uint64_t written_ms = 0;
  std::string_view key;
  bool reference = false;
  ChpEntryView entry;
};
// Decodes an update of a layout-3 block (tagged) or of an older entry;
// false when malformed.
bool decode_history_update(std::string_view bytes, bool tagged, HistoryUpdate* out);

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
  // Only its key, sequence, uuid and written_ms, with
  // ChpRecord::value_omitted set: every update, none read from chp_map.
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
