// ChpReconciler: the active member's side of a hand-over. Before its peer
// (about to follow us, or just restarted) replaces its map with ours, we
// ask it for every update it applied after the last sequence both share
// (common_point of the two epoch lists): a RECONCILE? request on the
// peer's CHP snapshot port, answered with KVSYNC-shaped updates in
// sequence order (an empty body is a delete) and a KTHXBAI carrying the
// peer's last sequence and "complete=1" (its history reached back) or
// "complete=0" (it sent its whole map instead: its deletes are unknown).
// result() then gives the updates we lack, one per key, to apply under new
// sequences: the peer's latest update of a key wins unless our own client
// update of it after the common point is later (last writer wins, by the
// time each update reached the pair, kept in the history; by sequence when
// a side does not know it) or the same one (same UUID) that we published
// at a sequence no lower than the peer's: one a client re-sent after a
// failover is applied again when the peer's copy is the later one, so no
// key's sequence goes below one a client saw. The peer's expiries are not
// taken: we expire what we hold ourselves.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "security/curve_socket.h"
#include "protocol/chp_codec.h"
#include "server/receive_budget.h"
#include "storage/chp_store.h"

namespace zstore::server {

inline constexpr std::string_view kReconcileCommand = "RECONCILE?";

class ChpReconciler {
 public:
  using Clock = std::chrono::steady_clock;

  // peer_chp: "tcp://host:P" of the peer's CHP ports; after: the common point.
  // receive_budget: the bytes its receive queue may hold (receive_budget.h).
  ChpReconciler(zmq::context_t& ctx, std::string peer_chp, std::uint64_t after, protocol::chp::Limits limits,
                std::function<std::uint64_t()> now_ms, security::SocketSecurity security = {},
                std::uint64_t receive_budget = kDefaultReceiveBudgetBytes);

  void start();  // connects and sends the request
  zmq::socket_t& socket() { return dealer_; }

  enum class Progress { kRunning, kDone, kFailed };
  // Reads what arrived. kFailed: malformed, too large or timed out (why()).
  Progress on_socket();
  Progress on_timer();
  const std::string& why() const { return why_; }

  // After kDone: the peer's last sequence, whether its history was
  // complete, and the writes we lack (store: our map, for the comparison).
  std::uint64_t peer_last() const { return peer_last_; }
  bool complete() const { return complete_; }
  std::uint64_t after() const { return after_; }
  storage::Status result(storage::ChpStore& store, std::vector<storage::ChpWrite>* out);

 private:
  Progress fail(std::string why);
  struct Written {
    std::uint64_t sequence = 0;
    std::uint64_t ms = 0;  // when it reached the pair; 0 unknown
  };
  storage::Status own_updates(storage::ChpStore& store, std::map<std::string, Written>* out, bool* complete);
  static bool peer_wins(Written peer, Written ours);

  zmq::context_t& ctx_;
  std::string peer_chp_;
  std::uint64_t after_;
  protocol::chp::Limits limits_;
  std::function<std::uint64_t()> now_ms_;
  security::SocketSecurity security_;  // CURVE client of the peer
  std::uint64_t receive_budget_;
  zmq::socket_t dealer_;
  Clock::time_point last_progress_{};
  std::map<std::string, protocol::chp::KvMsg> latest_;  // the peer's latest update per key
  std::uint64_t peer_last_ = 0;
  bool complete_ = false;
  std::string why_;
};

}  // namespace zstore::server
