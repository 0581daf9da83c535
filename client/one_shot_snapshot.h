// one_shot_snapshot: one CHP snapshot request (ICANHAZ? of a subtree) and
// its replies, without a subscriber, on the calling thread: what a client
// that only reads (zstore-cli get, snapshot) needs, with no wait for the
// publisher's first HUGZ. The caller sees each entry and may stop the
// stream early (closing the socket ends the server's stream).
// Thread-safe (no shared state).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "client/options.h"
#include "protocol/chp_codec.h"

namespace zstore::client {

struct OneShotSnapshot {
  enum class Result : std::uint8_t {
    kComplete,         // a server's stream reached KTHXBAI with no malformed reply
    kStopped,          // on_entry asked to stop
    kNoAnswer,         // no server answered completely within the timeout
    kHandshakeFailed,  // every server failed our security handshake: error says why
  };
  Result result = Result::kNoAnswer;
  std::uint64_t sequence = 0;  // kComplete: the snapshot's sequence (KTHXBAI)
  std::string properties;      // kComplete: the KTHXBAI's properties (zstore's extensions)
  std::string error;           // kHandshakeFailed: the HandshakeMonitor messages, joined by "; "
  std::string server;          // the address that answered (kComplete, kStopped)
};

// Called with each snapshot entry in arrival order; returns false to stop.
using SnapshotEntry = std::function<bool(protocol::chp::KvMsg&& entry)>;
// Called before each new attempt after the first: entries seen from an
// earlier server or connection do not belong to the snapshot that follows.
using SnapshotRestart = std::function<void()>;

// Asks options.servers in turn (one or two, "tcp://host:P"; only the servers,
// failover_timeout, security and context of options are used): a server
// silent for failover_timeout, or whose stream held a malformed reply, is
// left for the next, or asked again on a new connection when it is the only
// one (an ICANHAZ? also makes a Binary Star passive whose peer died take over).
// A failed security handshake leaves a server at once; when the last attempt
// with every server failed so, ends with kHandshakeFailed instead of waiting
// for the timeout. Throws std::invalid_argument for a malformed address or
// no server.
OneShotSnapshot one_shot_snapshot(const Options& options, std::string_view prefix, std::chrono::milliseconds timeout,
                                  const SnapshotEntry& on_entry, const SnapshotRestart& on_restart);

}  // namespace zstore::client
