#include "client/cli/printable.h"

#include <cstdint>
#include <cstdio>
#include <ctime>

namespace zstore::cli {
namespace {

// Length of the UTF-8 sequence of a printable code point >= 0xA0 at the
// start of s, or 0.
std::size_t utf8_printable_length(std::string_view s) {
  std::uint32_t cp = 0;
  std::size_t len = utf8_sequence(s, &cp);
  return cp < 0xA0 ? 0 : len;  // C1 controls are not printable
}

}  // namespace

std::size_t utf8_sequence(std::string_view s, std::uint32_t* code_point) {
  if (s.empty()) return 0;
  const auto b0 = static_cast<unsigned char>(s[0]);
  if (b0 < 0x80) {
    *code_point = b0;
    return 1;
  }
  std::size_t len = b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC2 ? 2 : 0;
  if (len == 0 || b0 > 0xF4 || s.size() < len) return 0;
  std::uint32_t cp = b0 & (0x7F >> len);
  for (std::size_t i = 1; i < len; ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  const bool overlong = (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
  const bool invalid = cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF);
  if (overlong || invalid) return 0;
  *code_point = cp;
  return len;
}

bool is_printable(std::string_view bytes) {
  while (!bytes.empty()) {
    const auto b = static_cast<unsigned char>(bytes[0]);
    std::size_t len = (b >= 0x20 && b < 0x7F) ? 1 : utf8_printable_length(bytes);
    if (len == 0) return false;
    bytes.remove_prefix(len);
  }
  return true;
}

std::string escape(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    switch (c) {
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      default:
        break;
    }
    if (b >= 0x20 && b < 0x7F) {
      out.push_back(c);
    } else {
      out += "\\x";
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 0xF]);
    }
  }
  return out;
}

std::string printable(std::string_view bytes) { return is_printable(bytes) ? std::string(bytes) : escape(bytes); }

std::string utc_time(std::uint64_t ms) {
  std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[40];
  std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(text + n, sizeof text - n, ".%03uZ", static_cast<unsigned>(ms % 1000));
  return text;
}

}  // namespace zstore::cli
