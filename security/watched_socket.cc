#include "security/watched_socket.h"

#include <utility>

namespace zstore::security {

WatchedSocket::WatchedSocket(zmq::context_t& ctx, zmq::socket_t socket, bool curve_client)
    : socket_(std::move(socket)) {
  monitor_.emplace(ctx, socket_, curve_client);
}

WatchedSocket& WatchedSocket::operator=(WatchedSocket&& other) noexcept {
  if (this != &other) {
    close();
    socket_ = std::move(other.socket_);
    monitor_ = std::move(other.monitor_);
    other.monitor_.reset();
  }
  return *this;
}

void WatchedSocket::close() {
  if (monitor_ && socket_) monitor_->stop();
  socket_.close();
  monitor_.reset();
}

}  // namespace zstore::security
