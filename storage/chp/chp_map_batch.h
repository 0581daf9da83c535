// How CHP writes land in the chp_map column family: an entry's encoding
// (chp_entry.h) and a batch's map side, the one ChpStore::apply writes and
// zstore-bench's floor measures. Sequences, history and meta are the
// store's (chp_store.h).
#pragma once

#include <span>
#include <string_view>

#include <rocksdb/write_batch.h>

#include "storage/chp/chp_entry.h"
#include "storage/chp/chp_write.h"

namespace zstore::storage {

// Adds key -> the entry's pieces to batch, copying them once, into the batch.
void put_entry(rocksdb::WriteBatch& batch, rocksdb::ColumnFamilyHandle* cf, std::string_view key,
               const ChpEntryPieces& entry);

// Adds the chp_map side of writes (already sequenced) to batch: in key
// order, only the last write of a key, deletes for empty values.
void put_map_in_key_order(rocksdb::WriteBatch& batch, rocksdb::ColumnFamilyHandle* map,
                          std::span<const ChpWrite> writes);

}  // namespace zstore::storage
