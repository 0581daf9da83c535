// ChpWrite: one update on its way into the map (ChpStore::apply), and the
// sequence it was given once applied.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace zstore::storage {

struct ChpWrite {
  std::string key;
  std::string uuid;
  std::string properties;
  std::string value;                // empty = delete the key
  std::uint64_t expires_at_ms = 0;  // absolute; 0 = no expiry
  std::uint64_t sequence = 0;       // in: 0 = assign next; out: the sequence used
  std::uint64_t written_ms = 0;     // wall clock when the update reached the pair (history only; 0 = unknown)
  // Keep its uuid and sequence in the batch that applies it (chp_outcomes.h):
  // a confirmed write, whose retry after a restart must learn it was applied.
  bool remember_outcome = false;
};

// A write slot kept from batch to batch gives back a value or properties
// buffer that grew past this after its batch: a burst of 16 MiB values
// otherwise left one such value allocated per slot for good.
inline constexpr std::size_t kMaxKeptWriteBytes = std::size_t{1} << 20;

inline void release_large_buffers(ChpWrite& w) {
  if (w.value.capacity() > kMaxKeptWriteBytes) std::string().swap(w.value);
  if (w.properties.capacity() > kMaxKeptWriteBytes) std::string().swap(w.properties);
}

}  // namespace zstore::storage
