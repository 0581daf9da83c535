// SocketSecurity: how a ZeroMQ socket of ours authenticates. Plain (no
// certificate) leaves sockets as they are (the NULL mechanism). With a
// certificate, a socket others connect to becomes a CURVE server (rfc 26)
// whose handshakes the ZAP handler of its context judges (rfc 27; the
// zap_domain names the port in logs and metrics), and a socket that
// connects becomes a CURVE client of the server whose public key is
// server_key. Apply before bind() or connect(): libzmq reads the options
// when the connection is made. Values, freely copied; thread-safe.
#pragma once

#include <optional>
#include <string>

#include "security/curve_cert.h"

namespace zmq {
class socket_t;
}

namespace zstore::security {

struct SocketSecurity {
  std::optional<CurveCert> cert;  // ours, with its secret key; nullopt: plain
  std::string server_key;         // Z85 public key of the servers we connect to

  bool curve() const { return cert.has_value(); }
  // A socket that binds: CURVE server in ZAP domain `domain`.
  void as_server(zmq::socket_t& socket, const std::string& domain) const;
  // A socket that connects to a CURVE server with key server_key.
  void as_client(zmq::socket_t& socket) const;
};

}  // namespace zstore::security
