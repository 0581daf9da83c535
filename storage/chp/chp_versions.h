// The chp_versions column family: every update of chp_history again, keyed
// by its key and then its sequence, with the whole entry (a set's value
// included), so that one key's versions are found with one seek and read
// newest first, and a set's value survives the key being overwritten
// (chp_history keeps only a reference to chp_map, chp_history.h).
//   key:   key_len u32 BE | key | sequence u64 BE
//   value: written_ms u64 BE (0 unknown) | chp_map entry (chp_entry.h;
//          empty value = a delete or an expiry)
// ChpStore writes it in the batch of the update's history entry and deletes
// it in the batch that trims that entry: it holds exactly the updates of
// chp_history after chp_versions_from (kMetaChpVersionsFrom), the last
// sequence when a database of an older zstore, without it, was first opened.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "storage/chp/chp_entry.h"

namespace zstore::storage {

inline constexpr std::size_t kVersionKeyOverhead = 12;  // the length and the sequence

// The key of version `sequence` of key.
std::string encode_version_key(std::string_view key, std::uint64_t sequence);
// The same into *out (replaced), reusing its buffer.
void assign_version_key(std::string* out, std::string_view key, std::uint64_t sequence);
// The prefix all of key's versions share (its length and its bytes).
std::string encode_version_prefix(std::string_view key);
// false when bytes are no version key.
bool decode_version_key(std::string_view bytes, std::string_view* key, std::uint64_t* sequence);

// One version of a key, as read back (ChpStore::key_history).
struct ChpVersion {
  std::uint64_t written_ms = 0;  // when the update reached the pair; 0 unknown
  ChpEntry entry;                // entry.value empty: deleted or expired
  bool operator==(const ChpVersion&) const = default;
};

// false when bytes are no version value.
bool decode_version_value(std::string_view bytes, ChpVersion* out);

}  // namespace zstore::storage
