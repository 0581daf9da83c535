// ChpReconciler: the active member's side of a hand-over. Before its peer
// (about to follow us, or just restarted) replaces its map with ours, we
// ask it for every update it applied after the last sequence both share
// (common_point of the two epoch lists): a RECONCILE? request on the
// peer's CHP snapshot port, answered with KVSYNC-shaped updates in
// sequence order (an empty body is a delete) and a KTHXBAI carrying the
// peer's last sequence and "complete=1" (its history reached back) or
// "complete=0" (it sent its whole map instead: its deletes are unknown).
// step() then gives, a bounded part per call, the updates we lack, one per
// key, to apply under new sequences: the peer's latest update of a key
// wins unless our own client update of it after the common point is later
// (last writer wins, by the time each update reached the pair, kept in the
// history; by sequence when a side does not know it), a client wrote the
// key while the hand-over ran, or it is the same one (same UUID) that we
// published at a sequence no lower than the peer's: one a client re-sent
// after a failover is applied again when the peer's copy is the later one,
// so no key's sequence goes below one a client saw. The peer's expiries
// are not taken: we expire what we hold ourselves.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <zmq.hpp>

#include "security/curve_socket.h"
#include "protocol/chp_codec.h"
#include "server/reactor/receive_budget.h"
#include "storage/chp/chp_store.h"

namespace zstore::server {

inline constexpr std::string_view kReconcileCommand = "RECONCILE?";

class ChpReconciler {
 public:
  using Clock = std::chrono::steady_clock;

  // peer_chp: "tcp://host:P" of the peer's CHP ports; after: the common point.
  // pair_token: as ChpFollower's (the request's connection is named with it).
  // receive_budget: the bytes its receive queue may hold (receive_budget.h),
  // and the bytes of the peer's updates it holds until step() has given
  // them (each counted with kHeldKeyOverhead): past that the hand-over
  // fails (on_socket()), is retried, and the peer does not resync.
  ChpReconciler(zmq::context_t& ctx, std::string peer_chp, std::uint64_t after, protocol::chp::Limits limits,
                std::function<std::uint64_t()> now_ms, security::SocketSecurity security = {},
                std::uint64_t receive_budget = kDefaultReceiveBudgetBytes, std::string pair_token = {});

  void start();  // connects and sends the request
  zmq::socket_t& socket() { return dealer_; }

  enum class Progress { kRunning, kDone, kFailed };
  // Reads what arrived. kFailed: malformed, too large (the receive budget
  // above) or timed out (why()).
  // kDone: the peer's side is in; step() works it out.
  Progress on_socket();
  Progress on_timer();  // kFailed after 5 s without a message from the peer
  const std::string& why() const { return why_; }
  bool received() const { return received_; }

  // A client's update of key, applied by us after start(): ours then wins
  // over the peer's (it reached the pair later). Past kMaxNotedBytes of
  // such keys (each counted with kNotedKeyOverhead) the hand-over fails
  // (step()) and is retried from the top, where these updates are in our
  // history.
  static constexpr std::size_t kMaxNotedBytes = std::size_t{256} << 20;
  static constexpr std::size_t kNotedKeyOverhead = 64;
  static constexpr std::size_t kHeldKeyOverhead = 200;  // a map node and a KvMsg
  void note_client_write(std::string_view key);

  // After on_socket() gave kDone: appends to *out the next writes we lack
  // (store: our map, for the comparison), reading at most kStepRecords of
  // our history records or kStepKeys of the peer's keys, so a reactor turn
  // stays short however much is handed over. kRunning: call again (the
  // writes given must be applied first); kDone: all given; kFailed: a read
  // error, or past kMaxNotedBytes (why()).
  static constexpr std::size_t kStepRecords = 4096;
  static constexpr std::size_t kStepKeys = 1024;
  Progress step(storage::ChpStore& store, std::vector<storage::ChpWrite>* out);

  // After kDone: the peer's last sequence, whether its history was
  // complete, and how many writes step() gave.
  std::uint64_t peer_last() const { return peer_last_; }
  std::size_t given() const { return given_; }
  bool complete() const { return complete_; }
  std::uint64_t after() const { return after_; }

 private:
  Progress fail(std::string why);
  static std::uint64_t held_size(const protocol::chp::KvMsg& kv);
  struct Written {
    std::uint64_t sequence = 0;
    std::uint64_t ms = 0;  // when it reached the pair; 0 unknown
  };
  bool read_own_updates();  // false: more to read
  storage::Status weigh(storage::ChpStore& store, protocol::chp::KvMsg& kv, std::vector<storage::ChpWrite>* out);
  static bool peer_wins(Written peer, Written ours);

  zmq::context_t& ctx_;
  std::string peer_chp_;
  std::uint64_t after_;
  protocol::chp::Limits limits_;
  std::function<std::uint64_t()> now_ms_;
  security::SocketSecurity security_;  // CURVE client of the peer
  std::uint64_t receive_budget_;
  std::string pair_token_;
  zmq::socket_t dealer_;
  Clock::time_point last_progress_{};
  std::map<std::string, protocol::chp::KvMsg> latest_;  // the peer's latest update per key
  std::uint64_t held_bytes_ = 0;                        // latest_'s, by held_size()
  std::uint64_t peer_last_ = 0;
  bool complete_ = false;
  bool received_ = false;
  std::string why_;
  std::unordered_set<std::string> noted_;  // note_client_write()
  std::size_t noted_bytes_ = 0;
  // step()'s progress: our history after the common point (null once read,
  // or when it does not reach back: ours_complete_), the keys a client
  // updated through us there, the next peer key.
  bool stepping_ = false;
  std::unique_ptr<storage::ChpSnapshotCursor> own_cursor_;
  bool ours_complete_ = false;
  std::map<std::string, Written> ours_;
  std::map<std::string, protocol::chp::KvMsg>::iterator next_;
  std::size_t given_ = 0;
};

}  // namespace zstore::server
