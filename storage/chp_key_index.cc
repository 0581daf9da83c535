#include "storage/chp_key_index.h"

#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace zstore::storage {
namespace {

static_assert(crypto_shorthash_KEYBYTES == 16 && crypto_shorthash_BYTES == 8);

constexpr std::size_t kFirstSlots = 1024;

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

std::size_t ChpKeyIndex::probe(std::uint64_t fp) const {
  std::size_t mask = slots_.size() - 1;
  std::size_t i = home(fp);
  while (slots_[i].fp != 0 && slots_[i].fp != fp) i = (i + 1) & mask;
  return i;
}

bool ChpKeyIndex::find(std::uint64_t fp, std::uint64_t* expires_at_ms) const {
  if (slots_.empty()) return false;
  const Slot& s = slots_[probe(nonzero(fp))];
  if (s.fp == 0) return false;
  *expires_at_ms = s.expires_at_ms;
  return true;
}

// Doubles the table (first use: kFirstSlots); false at max_slots_.
bool ChpKeyIndex::grow() {
  std::size_t n = slots_.empty() ? kFirstSlots : slots_.size() * 2;
  if (n > max_slots_) return false;
  std::vector<Slot> old(n);
  old.swap(slots_);
  for (const Slot& s : old) {
    if (s.fp != 0) slots_[probe(s.fp)] = s;
  }
  return true;
}

void ChpKeyIndex::put(std::uint64_t fp, std::uint64_t expires_at_ms) {
  fp = nonzero(fp);
  if (!slots_.empty()) {
    Slot& s = slots_[probe(fp)];
    if (s.fp == fp) {
      s.expires_at_ms = expires_at_ms;
      return;
    }
  }
  if ((slots_.empty() || over_load(size_ + 1, slots_.size())) && !grow()) {
    complete_ = false;  // full: the key stays unknown
    return;
  }
  slots_[probe(fp)] = {fp, expires_at_ms};
  ++size_;
}

// Backward-shift deletion: the entries after the hole that may move into
// it do, so every entry stays reachable from its home without tombstones.
void ChpKeyIndex::erase(std::uint64_t fp) {
  if (slots_.empty()) return;
  fp = nonzero(fp);
  std::size_t hole = probe(fp);
  if (slots_[hole].fp != fp) return;
  std::size_t mask = slots_.size() - 1;
  for (std::size_t j = (hole + 1) & mask; slots_[j].fp != 0; j = (j + 1) & mask) {
    std::size_t k = home(slots_[j].fp);
    bool stays = hole <= j ? (hole < k && k <= j) : (hole < k || k <= j);
    if (stays) continue;
    slots_[hole] = slots_[j];
    hole = j;
  }
  slots_[hole] = {};
  --size_;
}

void ChpKeyIndex::apply(std::span<const Change> changes) {
  for (const Change& c : changes) {
    if (c.exists) {
      put(c.fp, c.expires_at_ms);
    } else {
      erase(c.fp);
    }
  }
}

void ChpKeyIndex::clear(bool complete) {
  std::vector<Slot>().swap(slots_);
  size_ = 0;
  complete_ = complete;
}

}  // namespace zstore::storage
