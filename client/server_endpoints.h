// ServerEndpoints: the three ZeroMQ endpoints of one CHP server, derived from
// its configured address "tcp://host:P" (snapshot P, publisher P+1,
// collector P+2).
#pragma once

#include <string>
#include <string_view>

namespace zstore::client {

struct ServerEndpoints {
  std::string address;    // as configured, for messages
  std::string snapshot;   // ROUTER, port P
  std::string publisher;  // PUB, port P+1
  std::string collector;  // SUB, port P+2
};

// Throws std::invalid_argument unless address is "tcp://HOST:P" with a
// non-empty HOST and 1 <= P <= 65533.
ServerEndpoints parse_server(std::string_view address);

}  // namespace zstore::client
