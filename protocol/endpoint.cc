#include "protocol/endpoint.h"

#include <charconv>

namespace zstore::protocol {
namespace {

constexpr std::string_view kTcpScheme = "tcp://";

}  // namespace

std::optional<std::uint16_t> parse_port(std::string_view text) {
  if (text.empty() || text.size() > 5) return std::nullopt;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  std::uint32_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  if (value == 0 || value > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(value);
}

std::optional<HostPort> parse_host_port(std::string_view text) {
  std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  auto port = parse_port(text.substr(colon + 1));
  if (!port) return std::nullopt;
  return HostPort{std::string(text.substr(0, colon)), *port};
}

std::optional<HostPort> parse_tcp_endpoint(std::string_view text) {
  if (!text.starts_with(kTcpScheme)) return std::nullopt;
  return parse_host_port(text.substr(kTcpScheme.size()));
}

std::string tcp_endpoint(std::string_view host, std::uint16_t port) {
  std::string out(kTcpScheme);
  const bool bracket = host.find(':') != std::string_view::npos && !host.starts_with('[');
  if (bracket) out.push_back('[');
  out.append(host);
  if (bracket) out.push_back(']');
  out.push_back(':');
  out.append(std::to_string(port));
  return out;
}

std::optional<std::string> tcp_endpoint_at_offset(std::string_view base, std::uint16_t offset) {
  auto endpoint = parse_tcp_endpoint(base);
  if (!endpoint || endpoint->port > 65535 - offset) return std::nullopt;
  return tcp_endpoint(endpoint->host, static_cast<std::uint16_t>(endpoint->port + offset));
}

}  // namespace zstore::protocol
