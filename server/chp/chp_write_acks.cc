#include "server/chp/chp_write_acks.h"

#include <algorithm>

namespace zstore::server {

void ChpWriteAcks::acknowledged(std::uint64_t sequence, Clock::time_point now) {
  acked_ = std::max(acked_, sequence);
  last_ack_ = now;
}

bool ChpWriteAcks::joined(Clock::time_point now) const {
  return last_ack_ && now - *last_ack_ < wait_ && acked_ >= apart_until_;
}

void ChpWriteAcks::hold(ChpWriteRequests::Reply reply, Clock::time_point now) {
  held_.push_back({std::move(reply), now + wait_});
}

std::vector<ChpWriteRequests::Reply> ChpWriteAcks::due(Clock::time_point now, std::uint64_t* timed_out) {
  std::vector<ChpWriteRequests::Reply> out;
  // Held in commit order, but a retry answered from memory may carry an
  // older sequence: release every acknowledged one, then the timed-out front.
  for (auto it = held_.begin(); it != held_.end();) {
    if (it->reply.outcome.sequence <= acked_) {
      out.push_back(std::move(it->reply));
      it = held_.erase(it);
    } else {
      ++it;
    }
  }
  while (!held_.empty() && held_.front().deadline <= now) {
    apart_until_ = std::max(apart_until_, held_.front().reply.outcome.sequence);
    out.push_back(std::move(held_.front().reply));
    held_.pop_front();
    ++*timed_out;
  }
  return out;
}

void ChpWriteAcks::reset() {
  held_.clear();
  acked_ = 0;
  last_ack_.reset();
  apart_until_ = 0;
}

std::optional<ChpWriteAcks::Clock::time_point> ChpWriteAcks::next_deadline() const {
  if (held_.empty()) return std::nullopt;
  return held_.front().deadline;
}

}  // namespace zstore::server
