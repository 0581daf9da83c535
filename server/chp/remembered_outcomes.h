// RememberedOutcomes: the sequences of the last `capacity` applied writes,
// by their 16-byte uuid, for a retry of one to learn its first outcome.
// A ring of the entries in arrival order (the oldest is replaced once it
// is full) and an open-addressing index into it (linear probing, deletion
// by backward shift), both allocated once: no allocation per write. Uuids
// are client-chosen, so they are hashed with SipHash under a random key
// (a client cannot aim many at one probe run). Not thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace zstore::server {

class RememberedOutcomes {
 public:
  static constexpr std::size_t kUuidBytes = 16;

  explicit RememberedOutcomes(std::size_t capacity);

  // The sequence remembered for uuid, if any (a uuid of another size: none).
  std::optional<std::uint64_t> find(std::string_view uuid) const;
  // Remembers uuid -> sequence, replacing the oldest entry when full. A
  // uuid already remembered keeps its first sequence; one of another size
  // is ignored.
  void remember(std::string_view uuid, std::uint64_t sequence);
  std::size_t size() const { return size_; }

 private:
  static constexpr std::uint32_t kEmpty = UINT32_MAX;
  struct Entry {
    std::array<char, kUuidBytes> uuid;
    std::uint64_t sequence;
    std::uint32_t hash;
  };
  // An index slot: a ring position and its entry's hash, so that a probe
  // compares hashes without reading the ring.
  struct Slot {
    std::uint32_t at = kEmpty;
    std::uint32_t hash = 0;
  };
  std::uint32_t hash(std::string_view uuid) const;
  // The index slot holding ring entry e's position, or the empty slot
  // where a uuid of this hash would go.
  std::size_t probe(std::string_view uuid, std::uint32_t h) const;
  void erase_slot(std::size_t slot);

  std::size_t capacity_;
  std::vector<Entry> ring_;
  std::size_t next_ = 0;  // the ring's oldest entry once it is full
  std::size_t size_ = 0;
  std::vector<Slot> index_;
  std::size_t mask_;
  std::array<unsigned char, 16> key_;
};

}  // namespace zstore::server
