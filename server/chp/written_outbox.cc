#include "server/chp/written_outbox.h"

#include <utility>

namespace zstore::server {

using transport::SendOutcome;

WrittenOutbox::WrittenOutbox(Send send, std::size_t per_writer, std::size_t total)
    : send_(std::move(send)), per_writer_(per_writer), total_(total) {}

std::size_t WrittenOutbox::send(const std::string& identity, protocol::chp::WriteOutcome outcome) {
  auto it = by_writer_.find(identity);
  if (it == by_writer_.end()) {
    SendOutcome sent = send_(identity, outcome);
    if (sent == SendOutcome::kSent) return 0;
    if (sent == SendOutcome::kUnroutable) return 1;
    it = by_writer_.try_emplace(identity).first;
  }
  if (it->second.size() >= per_writer_ || waiting_ >= total_) {
    if (it->second.empty()) by_writer_.erase(it);
    return 1;
  }
  it->second.push_back(std::move(outcome));
  ++waiting_;
  return 0;
}

std::size_t WrittenOutbox::flush() {
  std::size_t dropped = 0;
  const std::size_t before = waiting_;
  for (auto it = by_writer_.begin(); it != by_writer_.end();) {
    auto& queue = it->second;
    SendOutcome sent = SendOutcome::kSent;
    while (!queue.empty() && (sent = send_(it->first, queue.front())) == SendOutcome::kSent) {
      queue.pop_front();
      --waiting_;
    }
    if (sent == SendOutcome::kUnroutable) {
      dropped += queue.size();
      waiting_ -= queue.size();
      queue.clear();
    }
    it = queue.empty() ? by_writer_.erase(it) : std::next(it);
  }
  stuck_ = waiting_ == before;
  return dropped;
}

}  // namespace zstore::server
