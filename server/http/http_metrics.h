// HttpMetrics: the HTTP side's connection counters, written by the
// HttpServer's io thread and read by /metrics (atomics: any thread).
#pragma once

#include <atomic>
#include <cstdint>

namespace zstore::server {

struct HttpMetrics {
  std::atomic<std::uint64_t> connections{0};      // open now
  std::atomic<std::uint64_t> max_connections{0};  // the cap (HttpConfig::max_connections)
  std::atomic<std::uint64_t> accepted{0};         // connections accepted
  // Closed, their request (head or body) unfinished, to let a newer
  // connection in when the cap was reached.
  std::atomic<std::uint64_t> evicted{0};
  // Closed at accept: the cap was reached and every connection had sent its
  // whole request (none could be evicted).
  std::atomic<std::uint64_t> refused{0};
  // Closed by a deadline: the request head, the body or the answer took too long.
  std::atomic<std::uint64_t> timed_out{0};
};

}  // namespace zstore::server
