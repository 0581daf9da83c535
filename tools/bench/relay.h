// Relay: the physical limit the benchmarks compare against. A minimal
// in-process ZeroMQ relay (zmq_proxy from a SUB to a PUB, both bound on
// loopback; no storage, no codec) on a SourceThread, optionally pinned to
// one CPU (like a server would be).
#pragma once

#include <string>
#include <vector>

#include <zmq.hpp>

#include "tools/bench/source_thread.h"

namespace zstore::bench {

// The relay's two sockets, bound on loopback: sub takes every message
// (no receive limit), pub sends without a limit. Returns their endpoints
// (writers', subscriber's). The floor relay (floor_relay.h) binds the same.
std::vector<std::string> bind_relay_sockets(zmq::socket_t& sub, zmq::socket_t& pub);

class Relay {
 public:
  // Binds and starts; throws std::runtime_error on failure.
  explicit Relay(int cpu);
  ~Relay();  // stops the proxy and joins
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  const std::string& input() const { return thread_.endpoints()[0]; }   // writers connect here
  const std::string& output() const { return thread_.endpoints()[1]; }  // the subscriber here

 private:
  zmq::socket_t* stopper_ = nullptr;  // on the relay thread's stack, see ~Relay; set before thread_ is ready
  SourceThread thread_;
};

}  // namespace zstore::bench
