// Turns a fuzzer's byte string into a multipart message: each frame is a
// length (1 byte; 255 means a 4-byte big-endian length follows) and then
// that many bytes (fewer at the end of the input).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace zstore::fuzz {

inline std::vector<std::string_view> frames_from_bytes(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string_view> frames;
  std::size_t pos = 0;
  while (pos < size && frames.size() < 16) {
    std::size_t len = data[pos++];
    if (len == 255) {
      len = 0;
      for (int i = 0; i < 4 && pos < size; ++i) len = (len << 8) | data[pos++];
    }
    len = std::min(len, size - pos);
    frames.emplace_back(reinterpret_cast<const char*>(data + pos), len);
    pos += len;
  }
  return frames;
}

// Aborts (a finding for the fuzzer) when a property does not hold.
#define ZSTORE_FUZZ_CHECK(cond)    \
  do {                             \
    if (!(cond)) __builtin_trap(); \
  } while (0)

}  // namespace zstore::fuzz
