#include "security/curve_socket.h"

#include <zmq.hpp>

namespace zstore::security {

void SocketSecurity::as_server(zmq::socket_t& socket, const std::string& domain) const {
  if (!cert) return;
  socket.set(zmq::sockopt::curve_server, 1);
  socket.set(zmq::sockopt::curve_secretkey, cert->secret_key);
  socket.set(zmq::sockopt::zap_domain, domain);
}

void SocketSecurity::as_client(zmq::socket_t& socket) const {
  if (!cert) return;
  socket.set(zmq::sockopt::curve_serverkey, server_key);
  socket.set(zmq::sockopt::curve_publickey, cert->public_key);
  socket.set(zmq::sockopt::curve_secretkey, cert->secret_key);
}

}  // namespace zstore::security
