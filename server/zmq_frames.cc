#include "server/zmq_frames.h"

#include <zmq_addon.hpp>

namespace zstore::server {

bool try_recv(zmq::socket_t& socket, ReceivedMessage* out) {
  out->parts.clear();
  out->views.clear();
  auto n = zmq::recv_multipart(socket, std::back_inserter(out->parts), zmq::recv_flags::dontwait);
  if (!n) return false;
  out->views.reserve(out->parts.size());
  for (const auto& p : out->parts) out->views.emplace_back(static_cast<const char*>(p.data()), p.size());
  return true;
}

namespace {

template <typename FrameList>
SendOutcome send_frames(zmq::socket_t& socket, const FrameList& frames, std::string_view identity) {
  try {
    if (!identity.empty()) {
      auto r = socket.send(zmq::buffer(identity.data(), identity.size()),
                           zmq::send_flags::sndmore | zmq::send_flags::dontwait);
      if (!r) return SendOutcome::kWouldBlock;
    }
    for (std::size_t i = 0; i < frames.size(); ++i) {
      auto flags = i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
      auto r = socket.send(zmq::buffer(frames[i].data(), frames[i].size()), flags | zmq::send_flags::dontwait);
      if (!r) return SendOutcome::kWouldBlock;
    }
  } catch (const zmq::error_t& e) {
    if (e.num() == EHOSTUNREACH) return SendOutcome::kUnroutable;
    throw;
  }
  return SendOutcome::kSent;
}

}  // namespace

SendOutcome try_send(zmq::socket_t& socket, const protocol::Frames& frames, std::string_view identity) {
  return send_frames(socket, frames, identity);
}

SendOutcome try_send(zmq::socket_t& socket, protocol::FrameViews frames, std::string_view identity) {
  return send_frames(socket, frames, identity);
}

}  // namespace zstore::server
