// Glue between cppzmq sockets and the codecs' frame types: receive a
// multipart message as string views, send Frames, with would-block and
// unroutable peers reported as values instead of exceptions.
#pragma once

#include <string_view>
#include <vector>

#include <zmq.hpp>

#include "protocol/frames.h"

namespace zstore::server {

// One received multipart message; views point into parts.
struct ReceivedMessage {
  std::vector<zmq::message_t> parts;
  std::vector<std::string_view> views;
  protocol::FrameViews frames() const { return views; }
  std::size_t bytes() const {
    std::size_t n = 0;
    for (const auto& v : views) n += v.size();
    return n;
  }
};

// Receives one whole multipart message without blocking. False when none is
// waiting.
bool try_recv(zmq::socket_t& socket, ReceivedMessage* out);

enum class SendOutcome { kSent, kWouldBlock, kUnroutable };

// Sends frames (after an optional routing identity) without blocking. On a
// would-block nothing was sent (ZeroMQ queues whole messages).
SendOutcome try_send(zmq::socket_t& socket, const protocol::Frames& frames, std::string_view identity = {});
SendOutcome try_send(zmq::socket_t& socket, protocol::FrameViews frames, std::string_view identity = {});

}  // namespace zstore::server
