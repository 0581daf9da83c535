// HaLink: the Binary Star state channel between the two servers of a pair.
// A PUB bound at our endpoint sends our state as one ASCII digit frame
// ("1".."4") every heartbeat; a SUB connected to the peer receives its.
#pragma once

#include <optional>
#include <string>

#include <zmq.hpp>

#include "server/binary_star.h"

namespace zstore::server {

class HaLink {
 public:
  // Binds bind_endpoint, connects to peer_endpoint; throws zmq::error_t.
  HaLink(zmq::context_t& ctx, const std::string& bind_endpoint, const std::string& peer_endpoint);

  void send_state(HaState state);
  // A well-formed peer state if one is waiting; malformed frames are
  // dropped and counted in *malformed.
  std::optional<HaState> receive(std::uint64_t* malformed);
  zmq::socket_t& subscriber() { return sub_; }

 private:
  zmq::socket_t pub_;
  zmq::socket_t sub_;
};

}  // namespace zstore::server
