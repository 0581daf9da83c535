#include "server/http/http_connections.h"

#include <vector>

#include "server/http/http_session.h"

namespace zstore::server {

HttpConnections::HttpConnections(std::size_t cap, HttpMetrics& metrics) : cap_(cap < 1 ? 1 : cap), metrics_(metrics) {
  metrics_.max_connections = cap_;
}

std::uint64_t HttpConnections::admit(const std::shared_ptr<HttpSession>& s) {
  if (open_.size() >= cap_ && !evict_one()) {
    ++metrics_.refused;
    return 0;
  }
  std::uint64_t id = next_id_++;
  open_.emplace(id, s);
  ++metrics_.accepted;
  metrics_.connections = open_.size();
  return id;
}

void HttpConnections::remove(std::uint64_t id) {
  if (open_.erase(id) != 0) metrics_.connections = open_.size();
}

bool HttpConnections::evict_one() {
  for (auto it = open_.begin(); it != open_.end(); ++it) {
    auto s = it->second.lock();
    if (s && s->received()) continue;
    open_.erase(it);
    ++metrics_.evicted;
    metrics_.connections = open_.size();
    if (s) s->close();
    return true;
  }
  return false;
}

void HttpConnections::close_unstarted() {
  std::vector<std::shared_ptr<HttpSession>> unstarted;
  for (auto& [id, weak] : open_) {
    auto s = weak.lock();
    if (s && !s->head_done()) unstarted.push_back(std::move(s));
  }
  for (auto& s : unstarted) s->close();  // their read handlers remove them
}

}  // namespace zstore::server
