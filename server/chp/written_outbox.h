// WrittenOutbox: the WRITTEN answers the snapshot ROUTER could not queue to
// their writer yet (its pipe at ZMQ_SNDHWM, shared with snapshots), kept
// per writer in order and sent again each turn, so a writer that reads its
// answers late still gets every one. Bounded: at most `per_writer` wait for
// one writer and `total` for all; an answer past either bound is dropped
// and counted (its write's outcome stands: a retry with the same uuid is
// answered from memory), as is one to a writer that has gone. Not
// thread-safe: one reactor's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <unordered_map>

#include "protocol/chp_writes.h"
#include "transport/zmq_frames.h"

namespace zstore::server {

class WrittenOutbox {
 public:
  // Queues one answer to a writer (by ROUTER identity), without blocking.
  using Send =
      std::function<transport::SendOutcome(const std::string& identity, const protocol::chp::WriteOutcome& outcome)>;

  WrittenOutbox(Send send, std::size_t per_writer = 16384, std::size_t total = 65536);

  // Sends outcome now, or keeps it behind that writer's waiting answers.
  // Returns the answers dropped (0 or 1).
  std::size_t send(const std::string& identity, protocol::chp::WriteOutcome outcome);
  // Sends the waiting answers, each writer's in order until its pipe is
  // full again. Returns the answers dropped (their writers had gone).
  std::size_t flush();
  bool empty() const { return waiting_ == 0; }
  std::size_t waiting() const { return waiting_; }
  // Whether the last flush() sent nothing (every waiting writer still full):
  // its caller may retry later than while answers move.
  bool stuck() const { return stuck_; }

 private:
  Send send_;
  std::size_t per_writer_;
  std::size_t total_;
  std::size_t waiting_ = 0;
  bool stuck_ = false;
  std::unordered_map<std::string, std::deque<protocol::chp::WriteOutcome>> by_writer_;
};

}  // namespace zstore::server
