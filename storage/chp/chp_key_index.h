// ChpKeyIndex: internal to ChpStore. Which keys the CHP map holds, with
// which expiry and at which sequence (the keys written since the store
// opened, and those a ChpKeyScan read after a restart), so that a write of
// a known key need not read its previous entry from RocksDB, nor a
// conditional write whose precondition names the key's sequence.
// Bounded: at most max_bytes of slots (half as much again while a growth
// moves entries to the doubled table). A key it does not hold is absent if
// the index is complete (it has seen every key of the map: the map was
// empty when the store opened or was cleared, and no key was dropped for
// room since), else unknown (the store reads it). Not thread-safe
// (ChpStore's thread).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace zstore::storage {

class ChpKeyIndex {
 public:
  // 96 MiB: 4M slots of 24 bytes, 3M keys at the highest load.
  static constexpr std::size_t kDefaultMaxBytes = std::size_t{96} << 20;

  explicit ChpKeyIndex(std::size_t max_bytes = kDefaultMaxBytes);
  // An index whose fingerprints are those of hashed_like (the same hash key).
  ChpKeyIndex(std::size_t max_bytes, const ChpKeyIndex& hashed_like);

  // A key's fingerprint: SipHash-2-4 (libsodium) under a key drawn at
  // random per index, so no one outside can choose keys that collide. Two
  // keys of a map of n share one with a chance of about n / 2^64 per write;
  // that would miscount the map's keys by one (TTL index entries are
  // verified by the sweep), and could let a conditional write that names
  // the other key's sequence (a sequence the server never gave for its
  // own key) through.
  std::uint64_t fingerprint(std::string_view key) const;

  // True and *expires_at_ms (0: none) and, if asked, *sequence (0: not
  // known) if the key exists in the map; false if unknown.
  bool find(std::uint64_t fp, std::uint64_t* expires_at_ms, std::uint64_t* sequence = nullptr) const;
  // The key exists with this expiry, at this sequence (0: not known).
  // Dropped when the index is full: the key stays unknown and the index is
  // no longer complete.
  void put(std::uint64_t fp, std::uint64_t expires_at_ms, std::uint64_t sequence = 0);
  // The key no longer exists (unknown from now on).
  void erase(std::uint64_t fp);
  // Asks the CPU to load fp's slot, ahead of a find(), put() or erase() of
  // it: a batch names the slot of a key a few keys ahead, so that their
  // cache misses overlap instead of each stalling in turn. No effect on
  // the contents. Always inlined: GCC finds a function that only prefetches
  // free of side effects and may delete the calls to it.
  [[gnu::always_inline]] void prefetch(std::uint64_t fp) const {
    if (slots_.empty()) return;
    const Slot* slot = &slots_[home(slots_, nonzero(fp))];
    __builtin_prefetch(slot);
    __builtin_prefetch(reinterpret_cast<const char*>(slot) + sizeof(Slot) - 1);  // a slot may straddle two lines
  }
  // How many keys ahead a batch prefetches.
  static constexpr std::size_t kPrefetchAhead = 8;

  // A key's state after a write that succeeded.
  struct Change {
    std::uint64_t fp = 0;
    bool exists = false;
    std::uint64_t expires_at_ms = 0;
    std::uint64_t sequence = 0;  // 0: not known
  };
  // put() or erase() for each change, in order (the last one of a key wins).
  void apply(std::span<const Change> changes);
  // Forgets every key; complete tells whether the map is now empty.
  void clear(bool complete);

  // Whether every key of the map is in the index (false when constructed).
  bool complete() const { return complete_; }

  std::size_t size() const { return size_; }
  // The slots held, both tables while a growth moves entries.
  std::size_t bytes() const { return (slots_.size() + old_.size()) * sizeof(Slot); }
  std::size_t max_bytes() const { return max_slots_ * sizeof(Slot); }
  // Whether entries are still being moved to a grown table.
  bool growing() const { return !old_.empty(); }

  // Slots of the previous table moved per put() or erase() while growing:
  // a growth never holds the caller for a pass over the whole table (with
  // 1.5M keys that pass took 43 ms, on the CHP reactor). Few, so the moves
  // (a cache miss each) spread thin: at 64 a growth to 16 MiB cost the
  // writes of its 40 ms about twice the CPU they had, and paced updates
  // queued for 30-50 ms. A growth starts at 3/8 of the new table and ends
  // by 1/2 of it, before the next one is due.
  static constexpr std::size_t kMovesPerChange = 4;

 private:
  struct Slot {
    std::uint64_t fp = 0;  // 0: empty
    std::uint64_t expires_at_ms = 0;
    std::uint64_t sequence = 0;  // 0: not known
  };
  // Slots from fresh zeroed pages, so making a table costs no pass over it
  // (a zeroed std::vector of 64 MiB took 24 ms). A table of 2 MiB or more
  // is mapped on its own and asks for transparent huge pages: a growth
  // touches its new table at random, and 4 KiB first-touch faults made a
  // 16 MiB table cost the reactor about 50 ms within a few thousand writes
  // (13 us a fault here; 2 MiB pages: 64 MiB in 5 ms). Without huge pages
  // (THP off) it works as before.
  class Table {
   public:
    Table() = default;
    explicit Table(std::size_t n);
    Table(Table&& other) noexcept : slots_(std::move(other.slots_)), n_(std::exchange(other.n_, 0)) {}
    Table& operator=(Table&& other) noexcept {
      slots_ = std::move(other.slots_);
      n_ = std::exchange(other.n_, 0);
      return *this;
    }
    std::size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    Slot& operator[](std::size_t i) { return slots_.get()[i]; }
    const Slot& operator[](std::size_t i) const { return slots_.get()[i]; }

   private:
    struct Free {
      std::size_t mapped_bytes;  // 0 (value-initialised): from calloc
      void operator()(Slot* p) const;
    };
    std::unique_ptr<Slot, Free> slots_;
    std::size_t n_ = 0;
  };
  static std::uint64_t nonzero(std::uint64_t fp) { return fp == 0 ? 1 : fp; }
  // The slot of table where fp's run starts.
  static std::size_t home(const Table& table, std::uint64_t fp) {
    return static_cast<std::size_t>(fp) & (table.size() - 1);
  }
  // The slot of table holding fp, or the empty one ending its run.
  static std::size_t probe(const Table& table, std::uint64_t fp);
  std::size_t probe(std::uint64_t fp) const { return probe(slots_, fp); }
  bool grow();
  // While growing: the previous table's slot holding fp if not yet moved
  // (and not dropped), else old_.size().
  std::size_t unmoved(std::uint64_t fp) const;
  void move_some(std::size_t n);  // moves n more slots of old_; frees it at the end

  std::size_t max_slots_;
  Table slots_;
  // A growth in progress: the previous table (never reshaped, so its runs
  // stay intact), the slots before moved_ already moved, and its entries
  // dropped since (written or erased in slots_ instead).
  Table old_;
  std::vector<bool> dropped_;
  std::size_t moved_ = 0;
  std::size_t size_ = 0;
  bool complete_ = false;
  std::array<unsigned char, 16> hash_key_{};
};

}  // namespace zstore::storage
