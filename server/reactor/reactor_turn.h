// The reactors' one error policy. An exception out of one turn of a reactor
// loop (a ZeroMQ error, a codec refusing a value) is logged (rate-limited),
// counted, and the loop goes on with its next turn: one bad event never ends
// or stalls zstored. What no later turn can recover from ends the loop and
// says so in the log: a terminated ZeroMQ context. What leaves the process
// in a state it cannot trust ends the process (a supervisor restarts it from
// the store, which lost nothing): std::bad_alloc anywhere, and any exception
// between a store write and the messages that announce it (after_store_write).
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>
#include <zmq.hpp>

#include "server/reactor/log.h"

namespace zstore::server {

// The exit status of a process ended by this policy (EX_SOFTWARE).
inline constexpr int kExitReactorFault = 70;

// Logs why, flushes the log and ends the process at once: no destructor
// runs that could publish or store from the state being abandoned.
[[noreturn]] inline void end_process(std::string_view reactor, std::string_view why) {
  spdlog::critical("{}: {}; zstored exits (status {}) for its supervisor to restart it from the store", reactor, why,
                   kExitReactorFault);
  spdlog::default_logger()->flush();
  std::_Exit(kExitReactorFault);
}

// Runs announce(), the part of a turn after a store write (publishing the
// updates, ACKs, write outcomes). An exception there would leave updates
// stored and never announced, so it ends the process.
template <typename Announce>
void after_store_write(std::string_view reactor, Announce&& announce) {
  try {
    announce();
  } catch (const std::exception& e) {
    end_process(reactor, std::string("failed after a store write, before announcing it: ") + e.what());
  } catch (...) {
    end_process(reactor, "failed after a store write, before announcing it");
  }
}

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
  } catch (const std::bad_alloc&) {
    end_process(reactor, "out of memory");
  } catch (const std::exception& e) {
    errors.fetch_add(1, std::memory_order_relaxed);
    log.log(spdlog::level::err, "{}: event failed and skipped: {}", reactor, e.what());
  }
  return true;
}

}  // namespace zstore::server
