// lookup_key: the value of one CHP key, read with one snapshot request and
// no subscriber. CHP (rfc 12) has no exact-key request and does not order a
// snapshot, so the best a client can do is ask for the subtree KEY (the
// server then sends every key starting with KEY) and keep only KEY itself:
// the lookup returns as soon as KEY arrives (closing the socket, which ends
// the server's stream early) and reads to KTHXBAI only when KEY is absent.
// A key that merely starts with KEY is never returned.
// Blocking, on the calling thread; thread-safe (no shared state).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "client/options.h"

namespace zstore::client {

struct KeyLookup {
  enum class Result : std::uint8_t {
    kFound,            // value holds KEY's value
    kAbsent,           // a server's complete snapshot of KEY did not hold KEY
    kNoAnswer,         // no server answered completely within the timeout
    kHandshakeFailed,  // every server failed our security handshake: error says why
  };
  Result result = Result::kNoAnswer;
  std::string value;
  std::uint64_t sequence = 0;  // kFound: the entry's sequence (what a conditional write names)
  std::string error;           // kHandshakeFailed: the HandshakeMonitor messages, joined by "; "
  std::string server;          // the address that answered (kFound, kAbsent)
};

// Asks options.servers in turn (one or two, "tcp://host:P"; only the servers,
// failover_timeout and context of options are used): a server silent for
// failover_timeout, or whose snapshot held a malformed reply and not KEY, is
// left for the next, or asked again on a new connection when it is the only
// one (an ICANHAZ? also makes a Binary Star passive whose peer died take over).
// A failed security handshake (security/handshake_monitor.h) leaves a server
// at once; when the last attempt with every server failed so, the lookup
// ends with kHandshakeFailed instead of waiting for the timeout.
// Throws std::invalid_argument for an empty key or a malformed address.
KeyLookup lookup_key(const Options& options, std::string_view key, std::chrono::milliseconds timeout);

}  // namespace zstore::client
