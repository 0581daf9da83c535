// ChpHistory: the chp_history column family, every update the CHP map
// applied (deletes and expiries included) keyed by its sequence, so a
// member of a pair can hand its peer exactly what the peer lacks, deletes
// included, and a client can resume. Bounded by entry count and optionally
// by age: the oldest entries are trimmed (see ChpStore). Layout:
//   key:   sequence u64 BE
//   value: written_ms u64 BE (when the update reached the pair, 0 unknown) |
//          key_len u32 BE | key | chp_map entry (chp_entry.h; empty value
//          = the key was deleted)
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

// Adds the history entry of one applied write to batch.
void put_history(rocksdb::WriteBatch& batch, Database* db, std::uint64_t sequence, std::uint64_t written_ms,
                 std::string_view key, const ChpEntryPieces& entry);

// Decodes a history value into *out; false when malformed.
bool decode_history(std::string_view bytes, ChpRecord* out);

// A cursor over the history entries with sequence > after and a key that
// starts with prefix, in sequence order, at a consistent point in time;
// sequence() reports `last`. It pauses (ChpSnapshotCursor::paused) after
// skipping a few thousand entries outside prefix, so no call runs long.
std::unique_ptr<ChpSnapshotCursor> history_cursor(Database* db, std::uint64_t after, std::uint64_t last,
                                                  std::string_view prefix = {});

}  // namespace zstore::storage
