#include "client/server_endpoints.h"

#include <charconv>
#include <stdexcept>

namespace zstore::client {
namespace {

constexpr std::string_view kScheme = "tcp://";

[[noreturn]] void reject(std::string_view address, std::string_view why) {
  throw std::invalid_argument("server address '" + std::string(address) + "': " + std::string(why) +
                              " (expected tcp://HOST:PORT)");
}

unsigned parse_port(std::string_view address, std::string_view text) {
  unsigned port = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) reject(address, "port is not a number");
  if (port == 0 || port > 65533) reject(address, "port must be 1..65533 (it uses P, P+1 and P+2)");
  return port;
}

}  // namespace

ServerEndpoints parse_server(std::string_view address) {
  if (!address.starts_with(kScheme)) reject(address, "not a tcp:// address");
  std::string_view rest = address.substr(kScheme.size());
  std::size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos) reject(address, "no port");
  std::string_view host = rest.substr(0, colon);
  if (host.empty()) reject(address, "no host");
  unsigned port = parse_port(address, rest.substr(colon + 1));
  std::string base = std::string(kScheme) + std::string(host) + ":";
  return ServerEndpoints{std::string(address), base + std::to_string(port), base + std::to_string(port + 1),
                         base + std::to_string(port + 2)};
}

}  // namespace zstore::client
