// HostileClients: threads that misbehave against one zstored's CHP ports
// (P, P+1, P+2) and HTTP port while zstore-torture runs, each cycling
// through the selected kinds (torture_options.h), one step of a few seconds
// each: open up to max_connections connections or sockets, misbehave on
// them, close them all, go on with the next kind. Failures to connect (the
// server is down between a kill and its restart) are counted, not fatal.
// They use a ZeroMQ context of their own, sized for clients x
// max_connections sockets; a socket or connection that cannot be made (out
// of fds) ends that step's opening early. The destructor stops and joins
// every thread within about a second.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "tools/torture_src/torture_options.h"

namespace zstore::torture {

struct HostileTargets {
  std::uint16_t chp_port = 0;   // the CHP base port P on 127.0.0.1
  std::uint16_t http_port = 0;  // 0: no HTTP port, the http kind only idles on CHP
};

struct HostileOptions {
  int clients = 1;
  std::vector<HostileKind> kinds;  // in turn; client i starts at kinds[i % size]
  int max_connections = 16;
  std::chrono::milliseconds step{3000};  // how long each kind is kept up
};

class HostileClients {
 public:
  HostileClients(HostileTargets targets, HostileOptions options);
  ~HostileClients();
  HostileClients(const HostileClients&) = delete;
  HostileClients& operator=(const HostileClients&) = delete;

  // "idle 120, slowsub 32, ..." : connections or requests made per kind.
  std::string summary() const;

 private:
  void run(int id);

  zmq::context_t ctx_;
  HostileTargets targets_;
  HostileOptions options_;
  std::atomic<bool> stop_{false};
  std::array<std::atomic<std::uint64_t>, kHostileKinds> acts_{};
  std::vector<std::thread> threads_;
};

}  // namespace zstore::torture
