// Endpoint: the one parser of zstore's network addresses, "HOST:PORT" and
// ZeroMQ's "tcp://HOST:PORT", and the one way to write the latter. HOST is
// everything before the last ':' and must not be empty (an IPv6 host comes
// in brackets, "[::1]", and keeps them); PORT is decimal digits only,
// 1..65535. Pure functions: no sockets, no exceptions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zstore::protocol {

struct HostPort {
  std::string host;
  std::uint16_t port = 0;
  bool operator==(const HostPort&) const = default;
};

// Decimal 1..65535, digits only (no sign, no spaces); nullopt otherwise.
std::optional<std::uint16_t> parse_port(std::string_view text);

// "HOST:PORT" as above; nullopt otherwise.
std::optional<HostPort> parse_host_port(std::string_view text);

// "tcp://HOST:PORT" as above; nullopt otherwise.
std::optional<HostPort> parse_tcp_endpoint(std::string_view text);

// "tcp://HOST:PORT"; a HOST containing ':' (IPv6) is put in brackets unless
// it already is.
std::string tcp_endpoint(std::string_view host, std::uint16_t port);

// The endpoint `offset` ports above base "tcp://HOST:PORT" (a CHP server's
// publisher at P+1, a tower's XPUB at T+1): "tcp://HOST:PORT+offset";
// nullopt when base is not that form or the port would pass 65535.
std::optional<std::string> tcp_endpoint_at_offset(std::string_view base, std::uint16_t offset);

}  // namespace zstore::protocol
