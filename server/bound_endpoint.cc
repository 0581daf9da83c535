#include "server/bound_endpoint.h"

#include <spdlog/spdlog.h>

namespace zstore::server {

BoundEndpoint::BoundEndpoint(zmq::socket_t* socket, std::string what)
    : socket_(socket), what_(std::move(what)), endpoint_(socket->get(zmq::sockopt::last_endpoint)) {}

void BoundEndpoint::drop_connections() {
  if (!unbound_) {
    socket_->unbind(endpoint_);
    unbound_ = true;
    unbound_at_ = std::chrono::steady_clock::now();
  }
  retry();
}

bool BoundEndpoint::retry() {
  if (!unbound_) return true;
  try {
    socket_->bind(endpoint_);
  } catch (const zmq::error_t& e) {
    if (std::chrono::steady_clock::now() - unbound_at_ >= kQuietRetry) {
      bind_log_.log(spdlog::level::err, "cannot bind the {} {} again yet: {}", what_, endpoint_, e.what());
    }
    return false;
  }
  unbound_ = false;
  spdlog::info("{} {} bound again", what_, endpoint_);
  return true;
}

}  // namespace zstore::server
