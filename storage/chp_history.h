// ChpHistory: the chp_history column family, every update the CHP map
// applied (deletes and expiries included) keyed by its sequence, so a
// member of a pair can hand its peer exactly what the peer lacks, deletes
// included, and a client can resume. Bounded by entry count and optionally
// by age: the oldest entries are trimmed (see ChpStore). An update is
//   written_ms u64 BE (when the update reached the pair, 0 unknown) |
//   key_len u32 BE | key | chp_map entry (chp_entry.h; empty value = the
//   key was deleted; its sequence is the update's)
// and the column holds two kinds of entries, keyed by the sequence of their
// last update, so a Seek to a sequence finds the entry holding it and a
// range delete below a sequence removes exactly the entries wholly below:
//   one update:  sequence u64 BE                    -> the update
//   a block:     last sequence u64 BE | kBlockTag   -> the updates as
//                PackedValues (packed_values.h), in sequence order
// A block holds updates of one ChpStore::apply, at most
// kMaxHistoryBlockBytes of value and the history's trim slack of updates; a
// lone update is written as one update (databases of layout 1 hold only
// those).
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
inline constexpr std::size_t kMaxHistoryBlockBytes = 64 << 10;

// Gathers the updates of one apply into history entries: add() each in
// sequence order, then finish() puts what is left. A block holds at most
// max_updates updates (the history's trim slack: trims drop whole entries,
// so the history stays within its bound and slack). Reusable.
class HistoryWriter {
 public:
  explicit HistoryWriter(std::uint64_t max_updates) : max_updates_(max_updates) {}
  // Adds one update, putting the block so far first when it would outgrow
  // kMaxHistoryBlockBytes.
  void add(rocksdb::WriteBatch& batch, Database* db, std::uint64_t sequence, std::uint64_t written_ms,
           std::string_view key, const ChpEntryPieces& entry);
  void finish(rocksdb::WriteBatch& batch, Database* db);

 private:
  std::uint64_t max_updates_;
  std::string block_;           // count placeholder, then length-prefixed updates
  std::uint32_t count_ = 0;
  std::size_t last_offset_ = 0;  // where the last update's bytes start in block_
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

// Decodes a history value into *out; false when malformed.
bool decode_history(std::string_view bytes, ChpRecord* out);

// A cursor over the history entries with sequence > after and a key that
// starts with prefix, in sequence order, at a consistent point in time;
// sequence() reports `last`. It pauses (ChpSnapshotCursor::paused) after
// skipping a few thousand entries outside prefix, so no call runs long.
std::unique_ptr<ChpSnapshotCursor> history_cursor(Database* db, std::uint64_t after, std::uint64_t last,
                                                  std::string_view prefix = {});

}  // namespace zstore::storage
