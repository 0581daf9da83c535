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

security::WatchedSocket CloneAgent::watch(zmq::socket_t socket) {
  return security::WatchedSocket(ctx_, std::move(socket), options_.security.curve());
}

void CloneAgent::check_handshakes() {
  for (std::size_t i = 0; i < collectors_.size(); ++i) check_handshake(i, collectors_[i].socket);
  check_handshake(current_, sub_);
  check_handshake(current_, dealer_);
  check_handshake(current_, writer_);
}

void CloneAgent::check_handshake(std::size_t index, security::WatchedSocket& socket) {
  if (!socket) return;
  auto failure = socket.monitor().poll();
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
  writer_.close();
  sub_.close();
  for (auto& c : collectors_) c.socket.close();
  pipe_.close();
}

}  // namespace zstore::client
