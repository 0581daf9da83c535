// Address ranges in CIDR notation ("10.0.0.0/8", "127.0.0.1", "fd00::/8"),
// for zstored --dafka-peers: which hosts the Dafka store may connect to.
// Pure functions over IP literals (inet_pton; no name resolution).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zstore::protocol {

struct Cidr {
  bool v6 = false;
  std::array<std::uint8_t, 16> address{};  // network byte order; 4 bytes used for IPv4
  int prefix_bits = 0;
};

// One range; a bare address is a /32 (/128). nullopt when malformed.
std::optional<Cidr> parse_cidr(std::string_view text);
// A comma-separated list; nullopt and *error (naming the bad item) when one
// is malformed or the list is empty.
std::optional<std::vector<Cidr>> parse_cidr_list(std::string_view text, std::string* error);
// Whether host, an IP literal (IPv6 possibly in brackets), lies in one of
// ranges. A host name is in none.
bool in_ranges(const std::vector<Cidr>& ranges, std::string_view host);

}  // namespace zstore::protocol
