// CloneAgent's sockets: how they are made, watched for failed security
// handshakes, and closed (the rest of the agent is in clone_agent.cc).
#include "client/clone_agent.h"

namespace zstore::client {

zmq::socket_t CloneAgent::make_socket(zmq::socket_type type) {
  zmq::socket_t socket(ctx_, type);
  socket.set(zmq::sockopt::linger, 0);
  options_.security.as_client(socket);
  return socket;
}

security::HandshakeMonitor CloneAgent::watch(zmq::socket_t& socket) {
  return security::HandshakeMonitor(ctx_, socket, options_.security.curve());
}

void CloneAgent::check_handshakes() {
  for (std::size_t i = 0; i < collectors_.size(); ++i) check_handshake(i, collectors_[i].monitor);
  check_handshake(current_, sub_monitor_);
  check_handshake(current_, dealer_monitor_);
}

void CloneAgent::check_handshake(std::size_t index, std::optional<security::HandshakeMonitor>& monitor) {
  if (!monitor) return;
  auto failure = monitor->poll();
  if (!failure) return;
  refused_[index] = true;
  state_.set_handshake_error(index, failure->message);
}

void CloneAgent::heard_from(std::size_t index) {
  if (!refused_[index]) return;
  refused_[index] = false;
  state_.set_handshake_error(index, std::nullopt);
}

void CloneAgent::close_all() {
  dealer_.close();
  sub_.close();
  for (auto& c : collectors_) c.socket.close();
  dealer_monitor_.reset();
  sub_monitor_.reset();
  for (auto& c : collectors_) c.monitor.reset();
  pipe_.close();
}

}  // namespace zstore::client
