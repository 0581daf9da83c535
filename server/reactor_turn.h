// The reactors' one error policy. An exception out of one turn of a reactor
// loop (a ZeroMQ error, bad_alloc, a codec refusing a value) is logged
// (rate-limited), counted, and the loop goes on with its next turn: one bad
// event never ends or stalls zstored. Only what no later turn can recover
// from ends the loop, and says so in the log: a terminated ZeroMQ context.
#pragma once

#include <cerrno>
#include <cstdint>
#include <exception>
#include <string_view>

#include <spdlog/spdlog.h>
#include <zmq.hpp>

#include "server/log.h"

namespace zstore::server {

// Runs turn() (which returns false when the loop was asked to stop) under
// the policy above; returns false when the loop must end.
template <typename Turn>
bool guarded_turn(std::string_view reactor, RateLimiter& log, std::atomic<std::uint64_t>& errors, Turn&& turn) {
  try {
    return turn();
  } catch (const zmq::error_t& e) {
    if (e.num() == ETERM) {
      spdlog::error("{}: ZeroMQ context terminated, the loop stops", reactor);
      return false;
    }
    if (e.num() == EINTR) return true;  // a signal handled on this thread: poll again
    errors.fetch_add(1, std::memory_order_relaxed);
    log.log(spdlog::level::err, "{}: event failed and skipped: {}", reactor, e.what());
  } catch (const std::exception& e) {
    errors.fetch_add(1, std::memory_order_relaxed);
    log.log(spdlog::level::err, "{}: event failed and skipped: {}", reactor, e.what());
  }
  return true;
}

}  // namespace zstore::server
