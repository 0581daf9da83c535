#include "protocol/cidr.h"

#include <arpa/inet.h>

#include <charconv>

namespace zstore::protocol {
namespace {

// Parses an IP literal into *out; false when it is none.
bool parse_address(std::string_view text, Cidr* out) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') text = text.substr(1, text.size() - 2);
  std::string s(text);
  out->v6 = s.find(':') != std::string::npos;
  return inet_pton(out->v6 ? AF_INET6 : AF_INET, s.c_str(), out->address.data()) == 1;
}

}  // namespace

std::optional<Cidr> parse_cidr(std::string_view text) {
  Cidr c;
  auto slash = text.find('/');
  if (!parse_address(text.substr(0, slash), &c)) return std::nullopt;
  int max_bits = c.v6 ? 128 : 32;
  c.prefix_bits = max_bits;
  if (slash != std::string_view::npos) {
    auto bits = text.substr(slash + 1);
    auto [end, ec] = std::from_chars(bits.data(), bits.data() + bits.size(), c.prefix_bits);
    if (bits.empty() || ec != std::errc() || end != bits.data() + bits.size() || c.prefix_bits < 0 ||
        c.prefix_bits > max_bits) {
      return std::nullopt;
    }
  }
  return c;
}

std::optional<std::vector<Cidr>> parse_cidr_list(std::string_view text, std::string* error) {
  std::vector<Cidr> out;
  while (!text.empty()) {
    auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    auto c = parse_cidr(item);
    if (!c) {
      *error = "'" + std::string(item) + "' is not an address or address/bits range";
      return std::nullopt;
    }
    out.push_back(*c);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  if (out.empty()) *error = "no address range given";
  return out.empty() ? std::nullopt : std::optional(out);
}

bool in_ranges(const std::vector<Cidr>& ranges, std::string_view host) {
  Cidr h;
  if (!parse_address(host, &h)) return false;
  for (const auto& r : ranges) {
    if (r.v6 != h.v6) continue;
    int bits = r.prefix_bits, i = 0;
    for (; bits >= 8; bits -= 8, ++i) {
      if (r.address[i] != h.address[i]) break;
    }
    if (bits >= 8) continue;  // a whole byte differed
    auto mask = static_cast<std::uint8_t>(0xff << (8 - bits));
    if (bits == 0 || (r.address[i] & mask) == (h.address[i] & mask)) return true;
  }
  return false;
}

}  // namespace zstore::protocol
