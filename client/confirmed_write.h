// confirmed_write: one CHP write whose outcome the caller learns, with an
// optional precondition (protocol/chp_writes.h): applied with its
// sequence, refused with the key's current sequence, or unknown. Blocking,
// on the calling thread, with a socket of its own and no subscriber, so it
// answers within a few round trips (no wait for a HUGZ). Thread-safe (no
// shared state).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "client/options.h"
#include "protocol/chp_writes.h"

namespace zstore::client {

struct WriteResult {
  enum class Result : std::uint8_t {
    kApplied,          // sequence: the write's
    kRefused,          // the precondition did not hold; sequence: the key's current (0 = absent)
    kFailed,           // a server answered that it did not store it (detail says why)
    kUnknown,          // it may or may not be applied: no outcome in time, or its fsync failed
    kNoAnswer,         // not sent: no server answered within the timeout
    kUnsupported,      // the server that answered does not take WRITE? (the Guide's servers)
    kHandshakeFailed,  // every server failed our security handshake: detail says why
  };
  Result result = Result::kNoAnswer;
  std::uint64_t sequence = 0;
  std::string detail;
  std::string uuid;    // the write's (a retry of the same write reuses it)
  std::string server;  // the address that answered
};

const char* to_string(WriteResult::Result result);

// Writes key=value (value empty: delete) with "ttl=N" when ttl_seconds > 0,
// applied only if precondition holds when the active server applies it.
// Asks options.servers (one or two; only servers, failover_timeout,
// security and context are used) which takes writes, with an empty
// snapshot request; sends the write there and waits for its outcome. A
// server that answers not-active, or is silent for failover_timeout, is
// left for the other, and the same write (same uuid) is sent again: a
// server applies one uuid at most once. Throws std::invalid_argument for
// an empty or reserved key or a malformed address.
WriteResult confirmed_write(const Options& options, std::string_view key, std::string_view value,
                            std::uint64_t ttl_seconds, const protocol::chp::Precondition& precondition,
                            std::chrono::milliseconds timeout);

}  // namespace zstore::client
