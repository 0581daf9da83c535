// HttpConnections: the open connections of an HttpServer, oldest first, and
// their cap. Admitting one at the cap evicts (closes) the oldest that has
// not sent its whole request (head, then body), so idle or slow clients can
// never keep a new request out; when every open connection is being
// answered, the new one is refused. Counted in HttpMetrics. Used on the io thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>

#include "server/http/http_metrics.h"

namespace zstore::server {

class HttpSession;

class HttpConnections {
 public:
  HttpConnections(std::size_t cap, HttpMetrics& metrics);

  // Takes s in and returns its id, or 0 when it is refused (close it).
  std::uint64_t admit(const std::shared_ptr<HttpSession>& s);
  // Forgets the connection id (closed). Idempotent.
  void remove(std::uint64_t id);
  // Closes every connection that has not finished its request head (stop()).
  void close_unstarted();
  std::size_t size() const { return open_.size(); }

 private:
  bool evict_one();

  const std::size_t cap_;
  HttpMetrics& metrics_;
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, std::weak_ptr<HttpSession>> open_;  // by id: oldest first
};

}  // namespace zstore::server
