// ClientState: what the agent thread learns and the API threads read: the
// local map, the synced flag, recently published UUIDs and counters.
// Thread-safe: every method takes the one mutex; waits use a condition
// variable signalled on every change. The agent is the only writer.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/change.h"
#include "client/client_stats.h"
#include "client/local_map.h"
#include "client/recent_uuids.h"
#include "client/snapshot_sync.h"
#include "client/write_waiters.h"
#include "protocol/chp_codec.h"

namespace zstore::client {

class ClientState {
 public:
  static constexpr std::size_t kRememberedUuids = 65536;

  // ---- agent side
  // Why the agent (re)connects to a server.
  enum class SessionCause : std::uint8_t { kStart, kFailover, kResync };
  // A new session with server `index`: not synced until its snapshot loads.
  void begin_session(std::size_t index, SessionCause cause);
  // Replaces the map by the snapshot (or, resumed, applies it on top),
  // applies the buffered updates, marks the client synced and remembers
  // the UUIDs; returns the changes.
  std::vector<Change> load(const LoadedSnapshot& snapshot);
  // Applies one live KVPUB (stale ones are counted and dropped).
  std::optional<Change> apply(const protocol::chp::KvMsg& update);
  void note_uuid(std::string_view uuid);
  // The client talks to `servers` servers (sizes the handshake records).
  void expect_servers(std::size_t servers);
  // A security handshake with server `index` failed, `why` says how
  // (counted); or, with nullopt, that server spoke to us again.
  void set_handshake_error(std::size_t index, std::optional<std::string> why);
  // Any counter update: fn runs under the lock, waiters are woken.
  void update_stats(const std::function<void(ClientStats&)>& fn);

  // Writes not yet taken by any server: the fewest queued for one server
  // (agent), and those on their way to the agent (API adds, agent takes).
  // Both wake a set() waiting for room.
  void set_unsent(std::size_t queued);
  void write_taken();

  // ---- API side
  void write_handed() { in_pipe_.fetch_add(1, std::memory_order_relaxed); }
  std::size_t unsent_writes() const {
    return unsent_.load(std::memory_order_relaxed) + in_pipe_.load(std::memory_order_relaxed);
  }
  // Waits until fewer than limit writes are unsent; false on time-out.
  bool wait_unsent_below(std::size_t limit, std::chrono::milliseconds timeout) const;
  std::optional<std::string> get(std::string_view key) const;
  std::optional<std::pair<std::string, std::uint64_t>> get_with_sequence(std::string_view key) const;
  std::map<std::string, std::string> values() const;
  std::uint64_t sequence() const;
  bool synced() const;
  // Whether a snapshot was ever loaded: the map and sequence() mean something.
  bool has_map() const;
  ClientStats stats() const;
  // Why no server can be reached: every server's last handshake failed
  // (their messages joined by "; "); nullopt otherwise.
  std::optional<std::string> handshake_error() const;
  bool wait_synced(std::chrono::milliseconds timeout) const;
  bool wait_published(std::string_view uuid, std::chrono::milliseconds timeout) const;
  // Evaluates predicate without the lock, again after each change.
  bool wait_for(const std::function<bool()>& predicate, std::chrono::milliseconds timeout) const;

  // ---- both: the confirmed writes not yet answered (its own lock)
  WriteWaiters& confirmed_writes() { return confirmed_writes_; }

 private:
  std::atomic<std::size_t> unsent_{0};
  std::atomic<std::size_t> in_pipe_{0};
  mutable std::atomic<int> room_waiters_{0};
  void wake_room_waiters();
  void changed();  // precondition: mu_ held

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::uint64_t version_ = 0;  // bumped on every change, for wait_for
  LocalMap map_;
  bool synced_ = false;
  RecentUuids uuids_{kRememberedUuids};
  ClientStats stats_;
  std::vector<std::optional<std::string>> handshake_errors_;  // per server
  WriteWaiters confirmed_writes_;
};

}  // namespace zstore::client
