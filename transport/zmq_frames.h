// The one way zstore's server and client libraries move multipart messages
// through cppzmq sockets: receive a whole message without blocking and read
// it as string views into its parts (no copy), send frames or forward
// received parts (zero-copy) without blocking, with would-block and an
// unroutable ROUTER peer reported as values instead of exceptions.
// Header-only, so the server and both client libraries use it without a
// library of its own; it depends on the codecs' frame types and cppzmq.
#pragma once

#include <cerrno>
#include <iterator>
#include <span>
#include <string_view>
#include <vector>

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "protocol/frames.h"

namespace zstore::transport {

// One received multipart message; views[i] points into parts[i], so both
// stay valid until the next receive into the same object (whose vectors
// are reused: receiving in a loop allocates nothing once they have grown).
struct Message {
  std::vector<zmq::message_t> parts;
  std::vector<std::string_view> views;
  protocol::FrameViews frames() const { return views; }
  std::size_t bytes() const {
    std::size_t n = 0;
    for (const auto& v : views) n += v.size();
    return n;
  }
};

// Receives one whole multipart message without blocking into *out. False
// (and *out empty) when none is waiting.
inline bool try_recv(zmq::socket_t& socket, Message* out) {
  out->parts.clear();
  out->views.clear();
  auto n = zmq::recv_multipart(socket, std::back_inserter(out->parts), zmq::recv_flags::dontwait);
  if (!n) return false;
  out->views.reserve(out->parts.size());
  for (const auto& p : out->parts) out->views.emplace_back(static_cast<const char*>(p.data()), p.size());
  return true;
}

// Receives one whole message without blocking, appending its parts to
// *parts (which keeps earlier messages' parts: views into them stay valid
// while a batch is built from several messages) and their views to *views
// (cleared first). False when none is waiting.
template <typename PartList>
bool try_recv_append(zmq::socket_t& socket, PartList* parts, std::vector<std::string_view>* views) {
  const std::size_t first = parts->size();
  if (!zmq::recv_multipart(socket, std::back_inserter(*parts), zmq::recv_flags::dontwait)) return false;
  views->clear();
  for (std::size_t i = first; i < parts->size(); ++i) views->push_back((*parts)[i].to_string_view());
  return true;
}

enum class SendOutcome { kSent, kWouldBlock, kUnroutable };

namespace detail {

// ZeroMQ queues whole messages: only the first part can block, so on a
// would-block nothing was sent. EHOSTUNREACH: a ROUTER's peer is gone.
template <typename Send>
SendOutcome send_all(std::size_t count, Send&& send_part) {
  try {
    for (std::size_t i = 0; i < count; ++i) {
      auto flags = zmq::send_flags::dontwait | (i + 1 < count ? zmq::send_flags::sndmore : zmq::send_flags::none);
      if (!send_part(i, flags)) return SendOutcome::kWouldBlock;
    }
  } catch (const zmq::error_t& e) {
    if (e.num() == EHOSTUNREACH) return SendOutcome::kUnroutable;
    throw;
  }
  return SendOutcome::kSent;
}

template <typename FrameList>
SendOutcome send_frames(zmq::socket_t& socket, const FrameList& frames, std::string_view identity) {
  const std::size_t first = identity.empty() ? 0 : 1;
  return send_all(first + frames.size(), [&](std::size_t i, zmq::send_flags flags) {
    std::string_view f = i < first ? identity : std::string_view(frames[i - first]);
    return socket.send(zmq::buffer(f.data(), f.size()), flags).has_value();
  });
}

}  // namespace detail

// Sends frames (after a routing identity, when one is given) without
// blocking, copying each into the message.
inline SendOutcome try_send(zmq::socket_t& socket, const protocol::Frames& frames, std::string_view identity = {}) {
  return detail::send_frames(socket, frames, identity);
}
inline SendOutcome try_send(zmq::socket_t& socket, protocol::FrameViews frames, std::string_view identity = {}) {
  return detail::send_frames(socket, frames, identity);
}

// Sends frames, blocking while the socket cannot queue them: for an inproc
// pipe whose reader applies back-pressure, or a request on a new DEALER.
// FrameList: protocol::Frames, FrameViews, or an array of strings.
template <typename FrameList>
void send(zmq::socket_t& socket, const FrameList& frames) {
  const std::size_t count = std::size(frames);
  for (std::size_t i = 0; i < count; ++i) {
    std::string_view f(frames[i]);
    socket.send(zmq::buffer(f.data(), f.size()), i + 1 < count ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
}

// Sends parts without copying their data: each part sent is moved from (left
// empty). On would-block nothing was sent and the parts are untouched.
inline SendOutcome try_send_parts(zmq::socket_t& socket, std::span<zmq::message_t> parts) {
  return detail::send_all(
      parts.size(), [&](std::size_t i, zmq::send_flags flags) { return socket.send(parts[i], flags).has_value(); });
}

}  // namespace zstore::transport
