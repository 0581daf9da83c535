// compare_bytes(): the order of two byte strings as memcmp and then length
// give it (RocksDB's BytewiseComparator, std::string's operator<), compared
// inline eight bytes at a time. The memtable and a batch's sort compare
// short keys (CHP keys of a few tens of bytes) a few dozen times per write;
// a call to memcmp for each cost more than the comparison itself.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace zstore::storage {

// Eight bytes of p as a number that orders as the bytes do.
inline std::uint64_t load_ordered(const char* p) {
  std::uint64_t x;
  std::memcpy(&x, p, 8);
  if constexpr (std::endian::native == std::endian::little) x = __builtin_bswap64(x);
  return x;
}

// Negative, zero or positive as a sorts before, with or after b.
inline int compare_bytes(const char* a, std::size_t a_size, const char* b, std::size_t b_size) {
  std::size_t n = std::min(a_size, b_size);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t x = load_ordered(a + i);
    std::uint64_t y = load_ordered(b + i);
    if (x != y) return x < y ? -1 : 1;
  }
  for (; i < n; ++i) {
    auto x = static_cast<unsigned char>(a[i]);
    auto y = static_cast<unsigned char>(b[i]);
    if (x != y) return x < y ? -1 : 1;
  }
  return a_size == b_size ? 0 : (a_size < b_size ? -1 : 1);
}

}  // namespace zstore::storage
