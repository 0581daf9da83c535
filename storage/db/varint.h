// Varints as LEB128 (seven bits a byte, low bits first, the high bit set
// on every byte but the last; RocksDB's and protobuf's encoding), and
// zigzag for signed differences: compact numbers in stored values
// (chp_history.h, layout 4).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace zstore::storage {

inline constexpr std::size_t kMaxVarintBytes = 10;

// Writes value at out (room for kMaxVarintBytes); returns the bytes written.
inline std::size_t encode_varint(char* out, std::uint64_t value) {
  std::size_t n = 0;
  while (value >= 0x80) {
    out[n++] = static_cast<char>(value | 0x80);
    value >>= 7;
  }
  out[n++] = static_cast<char>(value);
  return n;
}

inline void put_varint(std::string& out, std::uint64_t value) {
  char bytes[kMaxVarintBytes];
  out.append(bytes, encode_varint(bytes, value));
}

// Reads a varint off the front of *in; false (and *in as it was) when
// *in ends inside it or it does not fit in 64 bits.
inline bool get_varint(std::string_view* in, std::uint64_t* value) {
  std::uint64_t result = 0;
  for (std::size_t i = 0; i < in->size() && i < 10; ++i) {
    auto byte = static_cast<unsigned char>((*in)[i]);
    if (i == 9 && byte > 1) return false;  // past bit 63
    result |= static_cast<std::uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      in->remove_prefix(i + 1);
      *value = result;
      return true;
    }
  }
  return false;
}

// b - a, as a signed difference that wraps around 2^64, zigzag-encoded: a
// small step either way is a small number.
inline std::uint64_t zigzag_delta(std::uint64_t a, std::uint64_t b) {
  auto d = static_cast<std::int64_t>(b - a);
  return (static_cast<std::uint64_t>(d) << 1) ^ static_cast<std::uint64_t>(d >> 63);
}

// The b that zigzag_delta(a, b) gave z for.
inline std::uint64_t apply_zigzag_delta(std::uint64_t a, std::uint64_t z) {
  std::uint64_t d = (z >> 1) ^ (~(z & 1) + 1);
  return a + d;
}

}  // namespace zstore::storage
