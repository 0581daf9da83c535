// SnapshotPump: streams CHP snapshots (KVSYNC* then KTHXBAI) to clients in
// slices, so a snapshot of millions of keys never stalls the reactor. One
// session per client identity: a new ICANHAZ? replaces the running one.
// A key with a TTL is sent with "ttl=<seconds remaining>", so whoever loads
// the snapshot computes the same absolute expiry. Sends on a ROUTER with ZMQ_ROUTER_MANDATORY: a full pipe pauses the
// session, a vanished client ends it, and a session that could send nothing
// for `stall` (a client that stopped reading) is dropped, its cursor (and
// so its RocksDB snapshot) released.
// Fairness (SnapshotFairness): sessions are grouped by who asked (a CURVE
// client's name, else the connection's address); a group holds at most
// per_group of the slots, and a session paused for `waited` loses its slot
// to a request that needs it (its group's share or the last free slot is
// taken) or when the sessions' pipes hold more than budget_bytes. What a
// pipe holds is estimated from above: the bytes of the session's last
// pipe_messages messages (the ROUTER's ZMQ_SNDHWM), the most that can wait
// in its pipe; kernel socket buffers come on top.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <zmq.hpp>

#include "storage/chp/chp_store.h"

namespace zstore::server {

struct SnapshotFairness {
  std::size_t per_group = 32;                             // sessions one address or key may hold
  std::chrono::milliseconds waited{500};                  // paused this long: the slot goes to who waits
  std::uint64_t budget_bytes = std::uint64_t{256} << 20;  // the sessions' pipes, estimated (above)
  std::size_t pipe_messages = 1000;                       // the ROUTER's ZMQ_SNDHWM
};

class SnapshotPump {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::uint64_t kSmallAnswerBytes = std::uint64_t{256} << 10;
  static constexpr std::size_t kMaxSmallSessions = 16;
  // stall: 0 = never drop a paused session.
  explicit SnapshotPump(std::size_t max_sessions = 256, std::chrono::milliseconds stall = std::chrono::seconds(30),
                        SnapshotFairness fairness = {})
      : max_sessions_(max_sessions), stall_(stall), fair_(fairness) {}

  // Starts streaming cursor to identity, ending with a KTHXBAI that carries
  // kthxbai_properties. exact_expiry: each key with a TTL also carries
  // "expires-at=<ms since the epoch>" (an HA peer's hand-over; the ttl in
  // whole seconds would move the expiry). Returns false (and drops the
  // request) when max_sessions other clients are already being served.
  // allow: when set, only keys it accepts are sent (the client's ACL); the
  // others are counted in Result::withheld. priority (the HA peer's
  // requests): never refused, and served first with a whole budget per
  // pump, so a passive's resync does not wait behind hundreds of clients,
  // and outside the fairness limits (the caller checked it is the peer).
  // group: who asked (SnapshotFairness); empty: the identity. A request
  // over its group's share or beyond the free slots or the byte budget
  // takes the slot of the session paused longest (at least `waited`) of
  // its group, or of anyone; when there is none it is refused. A request
  // from an identity whose last session was dropped paused (a connection
  // that does not read) takes only a free slot, never another's.
  using KeyFilter = std::function<bool(std::string_view key)>;
  bool start(std::string identity, std::string subtree, std::unique_ptr<storage::ChpSnapshotCursor> cursor,
             std::string kthxbai_properties = {}, bool exact_expiry = false, KeyFilter allow = {},
             bool priority = false, std::string group = {});
  // The same, but the cursor (a RocksDB snapshot and iterator) and its
  // KTHXBAI properties are made by open() only once the request is
  // admitted: a flood of requests that are refused costs no cursor each.
  struct Opened {
    std::unique_ptr<storage::ChpSnapshotCursor> cursor;
    std::string kthxbai_properties;
  };
  using Open = std::function<Opened()>;
  // small: when set, called (only) for a request refused a slot; true if
  // its whole answer is small (about kSmallAnswerBytes at most, estimated
  // without reading it): the request is then served anyway, ahead of the
  // others, at most kMaxSmallSessions at a time. Such an answer fits in its
  // client's pipe, so it ends at once even if nobody reads it, and a good
  // client's small subtree is not refused behind a flood of whole-map
  // requests from its own address.
  using SmallAnswer = std::function<bool()>;
  bool start(std::string identity, std::string subtree, const Open& open, bool exact_expiry = false,
             KeyFilter allow = {}, bool priority = false, std::string group = {}, const SmallAnswer& small = {});

  struct Result {
    std::size_t keys_sent = 0;
    std::size_t completed = 0;  // snapshots finished with KTHXBAI
    std::size_t aborted = 0;    // client gone or read error
    std::size_t stalled = 0;    // dropped: nothing could be sent for the stall time
    bool blocked = false;       // some session waits for its pipe to drain
    std::size_t withheld = 0;   // keys a session's filter kept back
    std::size_t expired = 0;    // keys left out of a client's snapshot: their expiry passed, not yet swept
    std::size_t evicted = 0;    // dropped (paused) for a request that needed the slot, or over the budget
  };
  // Sends up to budget KVSYNCs round-robin over sessions. now_ms: the wall
  // clock, to send each TTL as the seconds remaining (rounded up) and to
  // leave out of a client's snapshot the keys whose expiry has passed.
  Result pump(zmq::socket_t& router, std::size_t budget, std::uint64_t now_ms) {
    return pump(router, budget, now_ms, Clock::now());
  }
  // The same at steady time now (tests).
  Result pump(zmq::socket_t& router, std::size_t budget, std::uint64_t now_ms, Clock::time_point now);

  void clear() {
    sessions_.clear();
    in_flight_ = 0;
  }
  bool active() const { return !sessions_.empty(); }
  // Whether some session can send now (not paused on a full pipe): the
  // reactor then polls without waiting.
  bool ready() const;
  std::size_t size() const { return sessions_.size(); }
  // The estimate of what the sessions' pipes hold (SnapshotFairness).
  std::uint64_t bytes_in_flight() const { return in_flight_; }

 private:
  struct Session {
    std::string identity;
    std::string subtree;
    std::unique_ptr<storage::ChpSnapshotCursor> cursor;
    std::string kthxbai_properties;
    bool exact_expiry = false;
    KeyFilter allow;
    bool priority = false;
    bool small = false;             // refused a slot, served as a small answer (start())
    storage::ChpRecordView record;  // the last record read (valid until the next read)
    bool pending = false;           // record is read but not yet sent
    bool blocked = false;
    Clock::time_point progress_at{};  // start, or the last time something was sent
    std::string group;
    std::vector<std::uint32_t> sizes;  // the last pipe_messages messages' bytes, a ring
    std::size_t next_size = 0;
    std::uint64_t in_flight = 0;  // their sum
  };
  enum class Step { kContinue, kBlocked, kDone, kAborted };
  Step step(zmq::socket_t& router, Session& s, std::size_t quota, std::uint64_t now_ms, Result* result);
  bool admit(const std::string& identity, const std::string& group);
  std::size_t small_sessions() const;
  // The cursor is exhausted: KTHXBAI, or the cursor's error.
  Step finish(zmq::socket_t& router, Session& s);
  void sent(Session& s, std::size_t bytes);
  // Drops the session (not the peer's) paused longest, for at least
  // fair_.waited, among those of group (empty: any); false if none is.
  bool evict_paused(const std::string* group, Clock::time_point now);
  std::list<Session>::iterator erase(std::list<Session>::iterator it);

  std::size_t max_sessions_;
  std::chrono::milliseconds stall_;
  SnapshotFairness fair_;
  std::list<Session> sessions_;
  std::uint64_t in_flight_ = 0;
  std::size_t evicted_ = 0;  // by start(), reported by the next pump()
  // Identities whose session was dropped paused, and when: their pipes
  // are still full. Bounded (forget_unread()).
  std::unordered_map<std::string, Clock::time_point> unread_;
  void note_unread(const std::string& identity, Clock::time_point now);
  Clock::time_point last_now_{};  // the latest pump()'s time
};

}  // namespace zstore::server
