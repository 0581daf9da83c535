#include "storage/chp/chp_map_batch.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "storage/db/bytewise.h"
#include "storage/db/slice.h"

namespace zstore::storage {
namespace {

// A batch's key with the first 16 bytes loaded as two numbers that order
// as the bytes do (zero-padded), so that most comparisons of a sort are
// two integer compares, with no load through the key's pointer.
struct OrderedKey {
  std::uint64_t high = 0;
  std::uint64_t low = 0;
  std::string_view key;
  std::uint32_t index = 0;  // the write's place in its batch: later wins

  static constexpr std::size_t kPrefix = 16;

  OrderedKey(std::string_view k, std::uint32_t i) : key(k), index(i) {
    char padded[kPrefix] = {};
    std::memcpy(padded, k.data(), std::min(k.size(), kPrefix));
    high = load_ordered(padded);
    low = load_ordered(padded + 8);
  }

  // The order of the keys (compare_bytes), then of their places.
  friend bool operator<(const OrderedKey& a, const OrderedKey& b) {
    if (a.high != b.high) return a.high < b.high;
    if (a.low != b.low) return a.low < b.low;
    int rest = a.rest_vs(b);
    return rest != 0 ? rest < 0 : a.index < b.index;
  }
  bool same_key(const OrderedKey& b) const { return high == b.high && low == b.low && rest_vs(b) == 0; }

  // Equal prefixes: a key of at most kPrefix bytes is then a prefix of
  // the other (its padding zeros match), so length decides; else the bytes
  // past the prefix do.
  int rest_vs(const OrderedKey& b) const {
    if (key.size() <= kPrefix || b.key.size() <= kPrefix) {
      return key.size() == b.key.size() ? 0 : (key.size() < b.key.size() ? -1 : 1);
    }
    return compare_bytes(key.data() + kPrefix, key.size() - kPrefix, b.key.data() + kPrefix, b.key.size() - kPrefix);
  }
};

}  // namespace

// Adds key -> the entry's pieces to batch, copying them once, into the batch.
void put_entry(rocksdb::WriteBatch& batch, rocksdb::ColumnFamilyHandle* cf, std::string_view key,
               const ChpEntryPieces& entry) {
  rocksdb::Slice parts[ChpEntryPieces::kCount];
  for (std::size_t i = 0; i < ChpEntryPieces::kCount; ++i) parts[i] = slice(entry.pieces()[i]);
  rocksdb::Slice key_slice = slice(key);
  batch.Put(cf, rocksdb::SliceParts(&key_slice, 1), rocksdb::SliceParts(parts, ChpEntryPieces::kCount));
}

// Only each key's last write of the batch goes to the map, in key order
// (a key written twice in one batch costs one memtable insert).
void put_map_in_key_order(rocksdb::WriteBatch& batch, rocksdb::ColumnFamilyHandle* map,
                          std::span<const ChpWrite> writes) {
  std::vector<OrderedKey> order;
  order.reserve(writes.size());
  for (std::uint32_t i = 0; i < writes.size(); ++i) order.emplace_back(writes[i].key, i);
  std::sort(order.begin(), order.end());
  for (std::size_t n = 0; n < order.size(); ++n) {
    if (n + 1 < order.size() && order[n + 1].same_key(order[n])) continue;  // a later write replaces it
    const ChpWrite& w = writes[order[n].index];
    if (w.value.empty()) {
      batch.Delete(map, slice(w.key));
    } else {
      put_entry(batch, map, w.key, ChpEntryPieces(w.sequence, w.expires_at_ms, w.uuid, w.properties, w.value));
    }
  }
}

}  // namespace zstore::storage
