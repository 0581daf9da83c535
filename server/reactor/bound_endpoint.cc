#include "server/reactor/bound_endpoint.h"

#include <spdlog/spdlog.h>

#include <utility>

namespace zstore::server {

BoundEndpoint::BoundEndpoint(zmq::socket_t* socket, std::string what, std::atomic<std::int64_t>* unbound_ports)
    : socket_(socket),
      what_(std::move(what)),
      endpoint_(socket->get(zmq::sockopt::last_endpoint)),
      unbound_ports_(unbound_ports) {}

// An endpoint destroyed unbound no longer counts (its socket closes with it).
BoundEndpoint::~BoundEndpoint() {
  if (unbound_ && unbound_ports_) unbound_ports_->fetch_sub(1, std::memory_order_relaxed);
}

BoundEndpoint::BoundEndpoint(BoundEndpoint&& other) noexcept { *this = std::move(other); }

BoundEndpoint& BoundEndpoint::operator=(BoundEndpoint&& other) noexcept {
  if (this == &other) return *this;
  if (unbound_ && unbound_ports_) unbound_ports_->fetch_sub(1, std::memory_order_relaxed);
  socket_ = std::exchange(other.socket_, nullptr);
  what_ = std::move(other.what_);
  endpoint_ = std::move(other.endpoint_);
  unbound_ports_ = std::exchange(other.unbound_ports_, nullptr);
  unbound_ = std::exchange(other.unbound_, false);
  unbound_at_ = other.unbound_at_;
  bind_log_ = other.bind_log_;
  return *this;
}

void BoundEndpoint::drop_connections() {
  if (unbound_) return;
  socket_->unbind(endpoint_);
  unbound_ = true;
  unbound_at_ = std::chrono::steady_clock::now();
  if (unbound_ports_) unbound_ports_->fetch_add(1, std::memory_order_relaxed);
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
  if (unbound_ports_) unbound_ports_->fetch_sub(1, std::memory_order_relaxed);
  spdlog::info("{} {} bound again", what_, endpoint_);
  return true;
}

}  // namespace zstore::server
