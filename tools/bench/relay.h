// Relay: the physical limit the benchmarks compare against. A minimal
// in-process ZeroMQ relay (zmq_proxy from a SUB to a PUB, both bound on
// loopback; no storage, no codec) on its own thread and ZeroMQ context,
// optionally pinned to one CPU (like a server would be).
#pragma once

#include <atomic>
#include <string>
#include <thread>

#include <zmq.hpp>

namespace zstore::bench {

class Relay {
 public:
  // Binds and starts; throws zmq::error_t or std::runtime_error on failure.
  explicit Relay(int cpu);
  ~Relay();  // stops the proxy and joins
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  const std::string& input() const { return input_; }    // writers connect here
  const std::string& output() const { return output_; }  // the subscriber here

 private:
  std::string input_;
  std::string output_;
  std::string control_;
  std::string error_;
  std::thread thread_;
  zmq::socket_t* stopper_ = nullptr;  // on the relay thread's stack, see ~Relay
};

}  // namespace zstore::bench
