#include "client/server_endpoints.h"

#include <stdexcept>

#include "protocol/endpoint.h"

namespace zstore::client {

ServerEndpoints parse_server(std::string_view address) {
  auto reject = [&](std::string_view why) {
    return std::invalid_argument("server address '" + std::string(address) + "': " + std::string(why) +
                                 " (expected tcp://HOST:PORT)");
  };
  if (!protocol::parse_tcp_endpoint(address)) throw reject("not tcp://HOST:PORT with a HOST and a PORT in 1..65535");
  auto collector = protocol::tcp_endpoint_at_offset(address, 2);
  if (!collector) throw reject("port must be 1..65533 (it uses P, P+1 and P+2)");
  return ServerEndpoints{std::string(address), *protocol::tcp_endpoint_at_offset(address, 0),
                         *protocol::tcp_endpoint_at_offset(address, 1), *collector};
}

}  // namespace zstore::client
