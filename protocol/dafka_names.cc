// Dafka's names (protocol/dafka_codec.h): subscription prefixes, node
// addresses made from UUIDs, and the checks of addresses and topic names
// that come from the network.
#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/dafka_codec.h"

namespace zstore::protocol::dafka {
namespace {

constexpr char kHexDigits[] = "0123456789ABCDEF";

}  // namespace

std::string subscription(MsgId id, std::string_view topic) {
  std::string out;
  out.reserve(1 + topic.size());
  out.push_back(static_cast<char>(id));
  out.append(topic);
  return out;
}

std::string make_address(std::span<const std::uint8_t, kUuidBytes> uuid) {
  std::string out;
  out.reserve(kAddressSize);
  for (std::uint8_t b : uuid) {
    out.push_back(kHexDigits[b >> 4]);
    out.push_back(kHexDigits[b & 0xf]);
  }
  return out;
}

std::string make_address(const unsigned char uuid[kUuidBytes]) {
  return make_address(std::span<const std::uint8_t, kUuidBytes>(uuid, kUuidBytes));
}

bool is_valid_address(std::string_view address) {
  if (address.size() != kAddressSize) return false;
  for (char c : address) {
    if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'))) return false;
  }
  return true;
}

bool is_valid_topic_name(std::string_view topic) {
  if (topic.empty() || topic.size() > 255) return false;
  std::size_t i = 0;
  while (i < topic.size()) {
    auto b0 = static_cast<unsigned char>(topic[i]);
    std::uint32_t cp = 0;
    std::size_t len = 0;
    std::uint32_t min = 0;
    if (b0 < 0x80) {
      cp = b0, len = 1;
    } else if ((b0 & 0xE0) == 0xC0) {
      cp = b0 & 0x1F, len = 2, min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
      cp = b0 & 0x0F, len = 3, min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
      cp = b0 & 0x07, len = 4, min = 0x10000;
    } else {
      return false;  // a continuation byte first, or 0xF8..0xFF
    }
    if (i + len > topic.size()) return false;
    for (std::size_t k = 1; k < len; ++k) {
      auto b = static_cast<unsigned char>(topic[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) return false;
    i += len;
  }
  return true;
}

}  // namespace zstore::protocol::dafka
