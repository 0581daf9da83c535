// SnapshotPump: streams CHP snapshots (KVSYNC* then KTHXBAI) to clients in
// slices, so a snapshot of millions of keys never stalls the reactor. One
// session per client identity: a new ICANHAZ? replaces the running one.
// A key with a TTL is sent with "ttl=<seconds remaining>", so whoever loads
// the snapshot computes the same absolute expiry. Sends on a ROUTER with ZMQ_ROUTER_MANDATORY: a full pipe pauses the
// session, a vanished client ends it, and a session that could send nothing
// for `stall` (a client that stopped reading) is dropped, its cursor (and
// so its RocksDB snapshot) released.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <list>
#include <memory>
#include <string>

#include <zmq.hpp>

#include "storage/chp_store.h"

namespace zstore::server {

class SnapshotPump {
 public:
  using Clock = std::chrono::steady_clock;
  // stall: 0 = never drop a paused session.
  explicit SnapshotPump(std::size_t max_sessions = 256, std::chrono::milliseconds stall = std::chrono::seconds(30))
      : max_sessions_(max_sessions), stall_(stall) {}

  // Starts streaming cursor to identity, ending with a KTHXBAI that carries
  // kthxbai_properties. exact_expiry: each key with a TTL also carries
  // "expires-at=<ms since the epoch>" (an HA peer's hand-over; the ttl in
  // whole seconds would move the expiry). Returns false (and drops the
  // request) when max_sessions other clients are already being served.
  // allow: when set, only keys it accepts are sent (the client's ACL); the
  // others are counted in Result::withheld. priority (the HA peer's
  // requests): never refused, and served first with a whole budget per
  // pump, so a passive's resync does not wait behind hundreds of clients.
  using KeyFilter = std::function<bool(std::string_view key)>;
  bool start(std::string identity, std::string subtree, std::unique_ptr<storage::ChpSnapshotCursor> cursor,
             std::string kthxbai_properties = {}, bool exact_expiry = false, KeyFilter allow = {},
             bool priority = false);

  struct Result {
    std::size_t keys_sent = 0;
    std::size_t completed = 0;  // snapshots finished with KTHXBAI
    std::size_t aborted = 0;    // client gone or read error
    std::size_t stalled = 0;    // dropped: nothing could be sent for the stall time
    bool blocked = false;       // some session waits for its pipe to drain
    std::size_t withheld = 0;   // keys a session's filter kept back
    std::size_t expired = 0;    // keys left out of a client's snapshot: their expiry passed, not yet swept
  };
  // Sends up to budget KVSYNCs round-robin over sessions. now_ms: the wall
  // clock, to send each TTL as the seconds remaining (rounded up) and to
  // leave out of a client's snapshot the keys whose expiry has passed.
  Result pump(zmq::socket_t& router, std::size_t budget, std::uint64_t now_ms) {
    return pump(router, budget, now_ms, Clock::now());
  }
  // The same at steady time now (tests).
  Result pump(zmq::socket_t& router, std::size_t budget, std::uint64_t now_ms, Clock::time_point now);

  void clear() { sessions_.clear(); }
  bool active() const { return !sessions_.empty(); }
  // Whether some session can send now (not paused on a full pipe): the
  // reactor then polls without waiting.
  bool ready() const;
  std::size_t size() const { return sessions_.size(); }

 private:
  struct Session {
    std::string identity;
    std::string subtree;
    std::unique_ptr<storage::ChpSnapshotCursor> cursor;
    std::string kthxbai_properties;
    bool exact_expiry = false;
    KeyFilter allow;
    bool priority = false;
    storage::ChpRecordView record;  // the last record read (valid until the next read)
    bool pending = false;           // record is read but not yet sent
    bool blocked = false;
    Clock::time_point progress_at{};  // start, or the last time something was sent
  };
  enum class Step { kContinue, kBlocked, kDone, kAborted };
  Step step(zmq::socket_t& router, Session& s, std::size_t quota, std::uint64_t now_ms, Result* result);

  std::size_t max_sessions_;
  std::chrono::milliseconds stall_;
  std::list<Session> sessions_;
};

}  // namespace zstore::server
