// key_history: one key's versions still in a zstored's history, newest
// first (protocol/chp_key_history.h). Blocking, on the calling thread, with
// a socket of its own and no subscriber: it returns as soon as the answer
// has arrived. Thread-safe (no shared state).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "client/options.h"
#include "protocol/chp_key_history.h"

namespace zstore::client {

struct KeyHistory {
  enum class Result : std::uint8_t {
    kOk,               // versions: newest first (empty: the history holds none of the key)
    kRefused,          // the server's --acl does not let us read the key
    kFailed,           // the server could not answer (detail says why)
    kNoAnswer,         // no server answered within the timeout, or the answer was cut short
    kUnsupported,      // the server that answered does not announce key-history (not a zstored, or an older one)
    kHandshakeFailed,  // every server failed our security handshake: detail says why
  };
  Result result = Result::kNoAnswer;
  std::vector<protocol::chp::KeyVersion> versions;
  std::string detail;
  std::string server;  // the address that answered
};

const char* to_string(KeyHistory::Result result);

// Asks options.servers (one or two; only servers, failover_timeout,
// security and context are used) which one answers clients, with an empty
// snapshot request, and, if its KTHXBAI announces key-history, asks it for
// key's last `limit` versions (1..protocol::chp::kMaxHistoryLimit). Throws
// std::invalid_argument for an empty key, a limit out of range or a
// malformed address.
KeyHistory key_history(const Options& options, std::string_view key, std::uint64_t limit,
                       std::chrono::milliseconds timeout);

}  // namespace zstore::client
