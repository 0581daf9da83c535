// AuthMetrics: authentication failures by port, shared by the ZAP handler
// (a ZeroMQ port's ZAP domain: chp-snapshot, chp-updates, chp-collector, ha,
// dafka-store, tower-beacons, tower-peers)
// and the HTTP server ("http"), and the allow list's revocations (the ZAP
// handler counts them, the reactors follow them). Thread-safe; /metrics
// reads it.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "server/access/key_revocations.h"

namespace zstore::server {

class AuthMetrics {
 public:
  AuthMetrics() {
    for (const char* port :
         {"chp-snapshot", "chp-updates", "chp-collector", "ha", "dafka-store", "tower-beacons", "tower-peers", "http"})
      failures_[port] = 0;
  }
  void count_failure(const std::string& port) {
    std::lock_guard lock(mutex_);
    ++failures_[port];
  }
  std::map<std::string, std::uint64_t> failures() const {
    std::lock_guard lock(mutex_);
    return failures_;
  }

  // Reloads of the allow list that removed a key.
  KeyRevocations revocations;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::uint64_t> failures_;
};

}  // namespace zstore::server
