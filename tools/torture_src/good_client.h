// GoodClient: a well-behaved client beside the hostile ones (--hostile). A
// thread that, while not paused, times in turn a CHP write's publish round
// trip (KVSET to P+2, its KVPUB on its own SUB to P+1) and a GET /healthz,
// and adds a violation for each that does not answer within the budget
// (2 s, times the build's time scale: harness.h; the first 20 in detail,
// then a count). pause() before a kill: what is in flight then is not
// counted.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include <zmq.hpp>

#include "tools/torture_src/chp_history.h"
#include "tools/torture_src/violations.h"

namespace zstore::torture {

inline constexpr std::chrono::milliseconds kGoodClientBudget{2000};

class GoodClient {
 public:
  GoodClient(zmq::context_t& ctx, std::uint16_t chp_port, std::uint16_t http_port, Violations& violations);
  ~GoodClient();
  GoodClient(const GoodClient&) = delete;
  GoodClient& operator=(const GoodClient&) = delete;

  void pause();
  void resume();
  // "round trips 120 (max 35 ms), /healthz 118 (max 12 ms), over 2 s: 0"
  std::string summary() const;
  std::uint64_t over_budget() const { return over_.load(); }

 private:
  void run();
  // Counts one timed operation, unless a pause() came meanwhile.
  void record(const char* what, std::chrono::milliseconds took, bool answered, std::uint64_t epoch);

  zmq::context_t& ctx_;
  std::uint16_t chp_port_;
  std::uint16_t http_port_;
  Violations& violations_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> paused_{false};
  std::atomic<std::uint64_t> epoch_{0};  // bumped by every pause()
  std::atomic<std::uint64_t> trips_{0}, healthz_{0}, over_{0};
  std::atomic<std::int64_t> max_trip_ms_{0}, max_healthz_ms_{0};
  std::thread thread_;
};

}  // namespace zstore::torture
