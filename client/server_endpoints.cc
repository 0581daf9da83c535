#include "client/server_endpoints.h"

#include <stdexcept>

#include "protocol/endpoint.h"

namespace zstore::client {

ServerEndpoints parse_server(std::string_view address) {
  auto reject = [&](std::string_view why) {
    return std::invalid_argument("server address '" + std::string(address) + "': " + std::string(why) +
                                 " (expected tcp://HOST:PORT)");
  };
  auto endpoint = protocol::parse_tcp_endpoint(address);
  if (!endpoint) throw reject("not tcp://HOST:PORT with a HOST and a PORT in 1..65535");
  if (endpoint->port > 65533) throw reject("port must be 1..65533 (it uses P, P+1 and P+2)");
  auto at = [&](int offset) {
    return protocol::tcp_endpoint(endpoint->host, static_cast<std::uint16_t>(endpoint->port + offset));
  };
  return ServerEndpoints{std::string(address), at(0), at(1), at(2)};
}

}  // namespace zstore::client
