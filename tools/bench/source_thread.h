// SourceThread: a benchmark's in-process server (the relay, the read-limit
// sources) on a thread and ZeroMQ context of its own, pinned to one CPU so
// that ZeroMQ's I/O thread inherits the pinning, like zstored's threads.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

namespace zstore::bench {

// body binds its sockets, calls ready(endpoints) once, then serves until
// stop is set (or until its owner stops it some other way before the
// destructor joins).
class SourceThread {
 public:
  using Ready = std::function<void(std::vector<std::string>)>;
  using Body = std::function<void(zmq::context_t&, const std::atomic<bool>& stop, const Ready& ready)>;
  // Returns once body called ready. Throws std::runtime_error("name: ...")
  // if body threw, or returned, before that.
  SourceThread(std::string name, int cpu, Body body);
  ~SourceThread();  // sets stop and joins
  SourceThread(const SourceThread&) = delete;
  SourceThread& operator=(const SourceThread&) = delete;

  const std::vector<std::string>& endpoints() const { return endpoints_; }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::string> endpoints_;
  std::thread thread_;
};

}  // namespace zstore::bench
