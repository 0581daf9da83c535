#include "server/chp/remembered_outcomes.h"

#include <sodium.h>

#include <bit>
#include <cstring>
#include <stdexcept>

namespace zstore::server {

RememberedOutcomes::RememberedOutcomes(std::size_t capacity)
    : capacity_(capacity),
      index_(capacity == 0 ? 0 : std::bit_ceil(2 * capacity)),
      mask_(index_.empty() ? 0 : index_.size() - 1) {
  if (sodium_init() < 0) throw std::runtime_error("libsodium could not be initialised");
  randombytes_buf(key_.data(), key_.size());
  ring_.reserve(capacity);
}

std::uint32_t RememberedOutcomes::hash(std::string_view uuid) const {
  unsigned char out[crypto_shorthash_BYTES];
  crypto_shorthash(out, reinterpret_cast<const unsigned char*>(uuid.data()), uuid.size(), key_.data());
  std::uint32_t h;
  std::memcpy(&h, out, sizeof h);
  return h;
}

// At most half full, so a run ends at an empty slot.
std::size_t RememberedOutcomes::probe(std::string_view uuid, std::uint32_t h) const {
  std::size_t slot = h & mask_;
  while (index_[slot].at != kEmpty) {
    if (index_[slot].hash == h && std::memcmp(ring_[index_[slot].at].uuid.data(), uuid.data(), kUuidBytes) == 0) {
      return slot;
    }
    slot = (slot + 1) & mask_;
  }
  return slot;
}

std::optional<std::uint64_t> RememberedOutcomes::find(std::string_view uuid) const {
  if (uuid.size() != kUuidBytes || index_.empty()) return std::nullopt;
  std::size_t slot = probe(uuid, hash(uuid));
  if (index_[slot].at == kEmpty) return std::nullopt;
  return ring_[index_[slot].at].sequence;
}

void RememberedOutcomes::remember(std::string_view uuid, std::uint64_t sequence) {
  if (uuid.size() != kUuidBytes || index_.empty()) return;
  const std::uint32_t h = hash(uuid);
  std::size_t slot = probe(uuid, h);
  if (index_[slot].at != kEmpty) return;  // remembered: its first outcome stands
  Entry e{{}, sequence, h};
  std::memcpy(e.uuid.data(), uuid.data(), kUuidBytes);
  std::uint32_t at;
  if (ring_.size() < capacity_) {
    at = static_cast<std::uint32_t>(ring_.size());
    ring_.push_back(e);
    ++size_;
  } else {
    at = static_cast<std::uint32_t>(next_);
    const Entry& old = ring_[at];
    erase_slot(probe({old.uuid.data(), kUuidBytes}, old.hash));
    ring_[at] = e;
    next_ = (next_ + 1) % ring_.size();
    slot = probe(uuid, h);  // the erase may have moved the run
  }
  index_[slot] = {at, h};
}

// Backward-shift deletion: each later entry of the run that may move to
// the hole (its home is not between the hole and it) moves there.
void RememberedOutcomes::erase_slot(std::size_t hole) {
  std::size_t j = hole;
  while (true) {
    j = (j + 1) & mask_;
    if (index_[j].at == kEmpty) break;
    std::size_t home = index_[j].hash & mask_;
    bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (stays) continue;
    index_[hole] = index_[j];
    hole = j;
  }
  index_[hole] = Slot{};
}

}  // namespace zstore::server
