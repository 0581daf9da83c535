#include "storage/chp/chp_key_index.h"

#include <sodium.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>

namespace zstore::storage {
namespace {

static_assert(crypto_shorthash_KEYBYTES == 16 && crypto_shorthash_BYTES == 8);

constexpr std::size_t kFirstSlots = 1024;
constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

// Linear probing stays short up to 3/4 full.
bool over_load(std::size_t size, std::size_t slots) { return size * 4 > slots * 3; }

}  // namespace

ChpKeyIndex::ChpKeyIndex(std::size_t max_bytes) {
  std::size_t slots = kFirstSlots;
  while (slots * 2 * sizeof(Slot) <= max_bytes) slots *= 2;
  max_slots_ = max_bytes < kFirstSlots * sizeof(Slot) ? 0 : slots;
  if (sodium_init() < 0) throw std::runtime_error("libsodium could not be initialised");
  randombytes_buf(hash_key_.data(), hash_key_.size());
}

ChpKeyIndex::ChpKeyIndex(std::size_t max_bytes, const ChpKeyIndex& hashed_like) : ChpKeyIndex(max_bytes) {
  hash_key_ = hashed_like.hash_key_;
}

std::uint64_t ChpKeyIndex::fingerprint(std::string_view key) const {
  unsigned char out[crypto_shorthash_BYTES];
  crypto_shorthash(out, reinterpret_cast<const unsigned char*>(key.data()), key.size(), hash_key_.data());
  std::uint64_t fp = 0;
  std::memcpy(&fp, out, sizeof(fp));
  return nonzero(fp);
}

// Tables of kHugePageBytes or more: a mapping aligned to a huge page, so
// the kernel can back it with whole 2 MiB pages (a table of 2^k 24-byte
// slots fills them from 6 MiB up).
ChpKeyIndex::Table::Table(std::size_t n) : n_(n) {
  std::size_t bytes = n * sizeof(Slot);
  if (bytes < kHugePageBytes) {
    slots_.reset(static_cast<Slot*>(std::calloc(n, sizeof(Slot))));
    if (!slots_) throw std::bad_alloc();
    return;
  }
  std::size_t mapped = bytes + kHugePageBytes;
  void* p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  auto base = reinterpret_cast<std::uintptr_t>(p);
  std::uintptr_t aligned = (base + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  // Give back the slack on either side, so the mapping is exactly the table.
  if (aligned > base) ::munmap(p, aligned - base);
  if (std::size_t tail = base + mapped - (aligned + bytes); tail > 0) {
    ::munmap(reinterpret_cast<void*>(aligned + bytes), tail);
  }
  auto* slots = reinterpret_cast<Slot*>(aligned);
  (void)::madvise(slots, bytes, MADV_HUGEPAGE);  // a hint: without THP, 4 KiB pages
  slots_ = std::unique_ptr<Slot, Free>(slots, Free{bytes});
}

void ChpKeyIndex::Table::Free::operator()(Slot* p) const {
  if (mapped_bytes > 0) {
    ::munmap(p, mapped_bytes);
  } else {
    std::free(p);
  }
}

std::size_t ChpKeyIndex::probe(const Table& table, std::uint64_t fp) {
  std::size_t mask = table.size() - 1;
  std::size_t i = home(table, fp);
  while (table[i].fp != 0 && table[i].fp != fp) i = (i + 1) & mask;
  return i;
}

std::size_t ChpKeyIndex::unmoved(std::uint64_t fp) const {
  if (old_.empty()) return old_.size();
  std::size_t i = probe(old_, fp);
  if (old_[i].fp != fp || i < moved_ || dropped_[i]) return old_.size();
  return i;
}

bool ChpKeyIndex::find(std::uint64_t fp, std::uint64_t* expires_at_ms, std::uint64_t* sequence) const {
  if (slots_.empty()) return false;
  fp = nonzero(fp);
  const Slot* s = &slots_[probe(fp)];
  if (s->fp != fp) {
    std::size_t i = unmoved(fp);
    if (i == old_.size()) return false;
    s = &old_[i];
  }
  *expires_at_ms = s->expires_at_ms;
  if (sequence) *sequence = s->sequence;
  return true;
}

void ChpKeyIndex::move_some(std::size_t n) {
  for (; n > 0 && moved_ < old_.size(); --n, ++moved_) {
    const Slot& s = old_[moved_];
    if (s.fp == 0 || dropped_[moved_]) continue;
    Slot& to = slots_[probe(s.fp)];
    if (to.fp == 0) to = s;  // never there already: a write of the key drops it here
  }
  if (moved_ == old_.size()) {
    old_ = Table();
    std::vector<bool>().swap(dropped_);
    moved_ = 0;
  }
}

// Doubles the table (first use: kFirstSlots); false at max_slots_. The
// entries move over the next puts and erases (kMovesPerChange each).
bool ChpKeyIndex::grow() {
  std::size_t n = slots_.empty() ? kFirstSlots : slots_.size() * 2;
  if (n > max_slots_) return false;
  move_some(old_.size());  // a growth still in progress ends first (rare: a table fills in far more changes)
  old_ = std::move(slots_);
  slots_ = Table(n);
  dropped_.assign(old_.size(), false);
  moved_ = 0;
  return true;
}

void ChpKeyIndex::put(std::uint64_t fp, std::uint64_t expires_at_ms, std::uint64_t sequence) {
  fp = nonzero(fp);
  move_some(kMovesPerChange);
  if (!slots_.empty()) {
    Slot& s = slots_[probe(fp)];
    if (s.fp == fp) {
      s.expires_at_ms = expires_at_ms;
      s.sequence = sequence;
      return;
    }
  }
  if (std::size_t i = unmoved(fp); i != old_.size()) {  // known: it moves now, with its new state
    dropped_[i] = true;
    slots_[probe(fp)] = {fp, expires_at_ms, sequence};
    return;
  }
  if ((slots_.empty() || over_load(size_ + 1, slots_.size())) && !grow()) {
    complete_ = false;  // full: the key stays unknown
    return;
  }
  slots_[probe(fp)] = {fp, expires_at_ms, sequence};
  ++size_;
}

// Backward-shift deletion: the entries after the hole that may move into
// it do, so every entry stays reachable from its home without tombstones.
// An entry not yet moved from the previous table is only marked dropped.
void ChpKeyIndex::erase(std::uint64_t fp) {
  if (slots_.empty()) return;
  fp = nonzero(fp);
  move_some(kMovesPerChange);
  if (std::size_t i = unmoved(fp); i != old_.size()) {
    dropped_[i] = true;
    --size_;
    return;
  }
  std::size_t hole = probe(fp);
  if (slots_[hole].fp != fp) return;
  std::size_t mask = slots_.size() - 1;
  for (std::size_t j = (hole + 1) & mask; slots_[j].fp != 0; j = (j + 1) & mask) {
    std::size_t k = home(slots_, slots_[j].fp);
    bool stays = hole <= j ? (hole < k && k <= j) : (hole < k || k <= j);
    if (stays) continue;
    slots_[hole] = slots_[j];
    hole = j;
  }
  slots_[hole] = {};
  --size_;
}

void ChpKeyIndex::apply(std::span<const Change> changes) {
  for (std::size_t i = 0; i < changes.size(); ++i) {
    if (i + kPrefetchAhead < changes.size()) prefetch(changes[i + kPrefetchAhead].fp);
    const Change& c = changes[i];
    if (c.exists) {
      put(c.fp, c.expires_at_ms, c.sequence);
    } else {
      erase(c.fp);
    }
  }
}

void ChpKeyIndex::clear(bool complete) {
  slots_ = Table();
  old_ = Table();
  std::vector<bool>().swap(dropped_);
  moved_ = 0;
  size_ = 0;
  complete_ = complete;
}

}  // namespace zstore::storage
