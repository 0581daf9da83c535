// ChpKeyIndex: internal to ChpStore. Which keys the CHP map holds, and
// with which expiry (the keys written since the store opened, and those a
// ChpKeyScan read after a restart), so that a write of a known key need
// not read its previous entry from RocksDB.
// Bounded: at most max_bytes of slots. A key it does not hold is absent if
// the index is complete (it has seen every key of the map: the map was
// empty when the store opened or was cleared, and no key was dropped for
// room since), else unknown (the store reads it). Not thread-safe
// (ChpStore's thread).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace zstore::storage {

class ChpKeyIndex {
 public:
  // 64 MiB: 4M slots of 16 bytes, 2.9M keys at the highest load.
  static constexpr std::size_t kDefaultMaxBytes = std::size_t{64} << 20;

  explicit ChpKeyIndex(std::size_t max_bytes = kDefaultMaxBytes);
  // An index whose fingerprints are those of hashed_like (the same hash key).
  ChpKeyIndex(std::size_t max_bytes, const ChpKeyIndex& hashed_like);

  // A key's fingerprint: SipHash-2-4 (libsodium) under a key drawn at
  // random per index, so no one outside can choose keys that collide. Two
  // keys of a map of n share one with a chance of about n / 2^64 per write;
  // that would miscount the map's keys by one (TTL index entries are
  // verified by the sweep), nothing else.
  std::uint64_t fingerprint(std::string_view key) const;

  // True and *expires_at_ms (0: none) if the key exists in the map; false
  // if unknown.
  bool find(std::uint64_t fp, std::uint64_t* expires_at_ms) const;
  // The key exists with this expiry. Dropped when the index is full: the
  // key stays unknown and the index is no longer complete.
  void put(std::uint64_t fp, std::uint64_t expires_at_ms);
  // The key no longer exists (unknown from now on).
  void erase(std::uint64_t fp);

  // A key's state after a write that succeeded.
  struct Change {
    std::uint64_t fp = 0;
    bool exists = false;
    std::uint64_t expires_at_ms = 0;
  };
  // put() or erase() for each change, in order (the last one of a key wins).
  void apply(std::span<const Change> changes);
  // Forgets every key; complete tells whether the map is now empty.
  void clear(bool complete);

  // Whether every key of the map is in the index (false when constructed).
  bool complete() const { return complete_; }

  std::size_t size() const { return size_; }
  std::size_t bytes() const { return slots_.capacity() * sizeof(Slot); }
  std::size_t max_bytes() const { return max_slots_ * sizeof(Slot); }

 private:
  struct Slot {
    std::uint64_t fp = 0;  // 0: empty
    std::uint64_t expires_at_ms = 0;
  };
  static std::uint64_t nonzero(std::uint64_t fp) { return fp == 0 ? 1 : fp; }
  std::size_t home(std::uint64_t fp) const { return static_cast<std::size_t>(fp) & (slots_.size() - 1); }
  std::size_t probe(std::uint64_t fp) const;  // the slot holding fp, or the empty one ending its run
  bool grow();

  std::size_t max_slots_;
  std::vector<Slot> slots_;
  std::size_t size_ = 0;
  bool complete_ = false;
  std::array<unsigned char, 16> hash_key_{};
};

}  // namespace zstore::storage
