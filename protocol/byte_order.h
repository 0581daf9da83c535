// Big-endian (network order) integer encoding shared by both codecs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace zstore::protocol {

template <typename T>
void put_be(std::string& out, T value) {
  for (std::size_t i = sizeof(T); i-- > 0;) {
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }
}

// Writes value to out[0 .. sizeof(T)).
template <typename T>
void store_be(char* out, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) out[i] = static_cast<char>(value >> (8 * (sizeof(T) - 1 - i)));
}

// Precondition: bytes.size() >= sizeof(T).
template <typename T>
T get_be(std::string_view bytes) {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    value = static_cast<T>((value << 8) | static_cast<unsigned char>(bytes[i]));
  }
  return value;
}

}  // namespace zstore::protocol
