#include "tools/dump/bytes_format.h"

#include "client/cli/printable.h"

namespace zstore::dump {

bool is_valid_utf8(std::string_view bytes) {
  while (!bytes.empty()) {
    std::uint32_t code_point = 0;
    std::size_t len = cli::utf8_sequence(bytes, &code_point);
    if (len == 0) return false;
    bytes.remove_prefix(len);
  }
  return true;
}

std::string base64(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t v = 0;
    for (std::size_t j = 0; j < 3; ++j) v = (v << 8) | (j < n ? static_cast<unsigned char>(bytes[i + j]) : 0u);
    for (std::size_t j = 0; j < 4; ++j) out.push_back(j <= n ? kAlphabet[(v >> (18 - 6 * j)) & 0x3F] : '=');
  }
  return out;
}

std::string hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xF]);
  }
  return out;
}

void put_bytes(nlohmann::ordered_json& object, const std::string& name, std::string_view bytes) {
  if (is_valid_utf8(bytes)) {
    object[name] = std::string(bytes);
  } else {
    object[name] = base64(bytes);
    object[name + "_encoding"] = "base64";
  }
}

std::string text(std::string_view bytes) { return cli::printable(bytes); }

std::string iso8601_ms(std::uint64_t ms) { return cli::utc_time(ms); }

}  // namespace zstore::dump
