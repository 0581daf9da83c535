// CloneClient: a local, continuously updated copy of a CHP (rfc 12) hashmap
// or subtree of it, kept by a background thread, plus writes to it.
//
// The client loads a snapshot from one server, then applies its KVPUBs in
// strictly increasing sequence order; after failover_timeout of silence it
// moves to the next server and loads a fresh snapshot that replaces the map.
// Writes (KVSET) go to every configured server. All methods are thread-safe;
// reads never block on the network. A missing key reads as std::nullopt.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "client/change.h"
#include "client/client_stats.h"
#include "client/options.h"
#include "client/pending_write.h"

namespace zstore::client {

// From set() and erase() when Options::max_unsent_writes writes still wait
// for a server after Options::write_wait: the write was not queued.
class WriteQueueFull : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CloneClient {
 public:
  // Starts the background thread. Throws std::invalid_argument when the
  // options are unusable (no server, more than two, a malformed address).
  explicit CloneClient(Options options);
  // Stops the background thread and closes its sockets without lingering;
  // KVSETs not yet handed to the network are dropped.
  ~CloneClient();
  CloneClient(const CloneClient&) = delete;
  CloneClient& operator=(const CloneClient&) = delete;

  // Sends KVSET key=value (sequence 0, a fresh random 16-byte UUID, "ttl=N\n"
  // when ttl_seconds > 0) to every server and returns the UUID. Fire and
  // forget: use wait_published() to know a server stored and published it.
  // Throws std::invalid_argument for an empty or reserved key. While
  // Options::max_unsent_writes writes wait for a server that takes them it
  // blocks, up to Options::write_wait, then throws WriteQueueFull (nothing
  // is ever dropped from that queue).
  std::string set(std::string_view key, std::string_view value, std::uint64_t ttl_seconds = 0);
  // Sends a delete (KVSET with an empty value); returns its UUID.
  std::string erase(std::string_view key);

  // Confirmed writes (docs/chp-extensions.md, "Confirmed and conditional
  // writes"): WRITE? to the server in use, applied only if options'
  // precondition holds there (if-seq=N, if-absent), answered with its
  // outcome; the handle's wait() returns it: applied with the write's
  // sequence, refused with the key's current one, failed, or unknown when
  // no answer came by the deadline (never reported as applied then). The
  // client sends the write (same UUID) again after a failover or silence
  // while the handle lives; a server applies one UUID at most once. Against
  // a server that does not announce writes=1 (the Guide's) the write fails
  // without being sent. Throws std::invalid_argument as set() does, and
  // WriteQueueFull when Options::max_unsent_writes confirmed writes wait
  // for their answers.
  PendingWrite write(std::string_view key, std::string_view value, const WriteOptions& options = {});
  // A confirmed delete (options: a precondition; ttl is ignored).
  PendingWrite write_erase(std::string_view key, const WriteOptions& options = {});
  // Sends the same write again (same UUID) with a new handle: after an
  // unknown outcome it learns the first one's, or applies it if it never was.
  PendingWrite retry(const PendingWrite& write);

  std::optional<std::string> get(std::string_view key) const;
  // The key's value and the sequence of its last update (what an if-seq
  // precondition names); nullopt when absent from the local map.
  std::optional<std::pair<std::string, std::uint64_t>> get_with_sequence(std::string_view key) const;
  std::map<std::string, std::string> snapshot_map() const;
  // Sequence of the last applied snapshot or KVPUB; 0 before the first sync.
  std::uint64_t sequence() const;
  // True when the map holds a complete snapshot of the current server plus
  // its later updates; false while (re)synchronising.
  bool synced() const;
  ClientStats stats() const;
  // Why the client cannot reach any server, when the last security handshake
  // with each of them failed: "CURVE handshake with tcp://...: the server
  // refused our key (not in its allow list)", "... server key mismatch ...",
  // "... security mechanism mismatch ..." (joined by "; " for two servers);
  // nullopt otherwise. The client keeps retrying (a key added to the
  // server's allow list later is used), so this clears once a server speaks.
  std::optional<std::string> handshake_error() const;

  // Block until synced(); false on time-out.
  bool wait_synced(std::chrono::milliseconds timeout) const;
  // Block until a KVPUB (or a snapshot entry) carrying this UUID was received
  // from a server; false on time-out. Only writes within the client's subtree
  // can be seen; the last 65536 UUIDs are remembered.
  bool wait_published(std::string_view uuid, std::chrono::milliseconds timeout) const;
  // Block until predicate() holds, re-evaluating it after every change of the
  // client's state; false on time-out. The predicate may call the client.
  bool wait_for(const std::function<bool()>& predicate, std::chrono::milliseconds timeout) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zstore::client
