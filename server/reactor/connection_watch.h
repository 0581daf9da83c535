// ConnectionWatch: caps the TCP connections of zstored's listening ZeroMQ
// sockets, per port and in total, and drops subscribers that fall more than
// a byte budget behind. One thread of its own (not a reactor) reads a socket
// monitor (zmq_socket_monitor: ZMQ_EVENT_ACCEPTED and ZMQ_EVENT_DISCONNECTED
// carry the connection's fd) of each watched socket. A connection over a cap
// is ended with shutdown(fd, SHUT_RDWR) once getsockname/getpeername show
// the fd is still the connection accepted (not a reused fd); libzmq then
// closes it itself. Counts are checked against the fds every second, so a
// missed event cannot leak a slot. At a cap, a new connection first takes
// the slot of the oldest one that has not sent a whole ZMTP greeting (64
// bytes) kSilentGrace after it was accepted (an idle TCP flood holding the
// slots), as the HTTP port evicts the oldest unfinished request; it is
// refused only when there is none. A new connection that has already sent
// its greeting when the watch sees it (and so perhaps a request, which
// ending it would lose) takes the slot of the oldest silent one of any age.
//
// Byte budget (budget_bytes != 0): the socket's owner counts what it sends
// in published_bytes; every kCheckInterval the watch reads each
// connection's TCP progress (bytes acked, bytes queued in the kernel) and
// ends a connection whose backlog in libzmq's pipe, published minus handed
// to the kernel since its send queue was last empty, exceeds the budget.
//
// Thread-safety: watch() before start(), from the thread that owns the
// socket and before that socket's reactor runs; stop() before the sockets
// close and after every unwatch(). Metrics are atomics, readable from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

namespace zstore::server {

struct ConnectionLimits {
  std::size_t per_port = 0;  // 0 = no cap of its own (the total still holds)
  std::size_t total = 0;     // 0 = no cap
};

// One watched port's counters (/metrics).
struct WatchedPort {
  std::string name;  // "chp-snapshot", "chp-updates", ...
  std::uint64_t budget_bytes = 0;
  std::atomic<std::uint64_t> published_bytes{0};  // written by the socket's owner
  std::atomic<std::uint64_t> connections{0};
  std::atomic<std::uint64_t> refused{0};       // ended at once: a cap was reached
  std::atomic<std::uint64_t> evicted{0};       // ended silent, for a newer connection at a cap
  std::atomic<std::uint64_t> slow_dropped{0};  // ended: more than budget_bytes behind
};

class ConnectionWatch {
 public:
  static constexpr std::chrono::milliseconds kCheckInterval{20};
  static constexpr std::chrono::milliseconds kVerifyInterval{1000};
  // A connection silent this long after its accept may lose its slot at a
  // cap (a ZeroMQ peer sends its greeting at once).
  static constexpr std::chrono::milliseconds kSilentGrace{1000};

  ConnectionWatch(zmq::context_t& ctx, ConnectionLimits limits);
  ~ConnectionWatch();
  ConnectionWatch(const ConnectionWatch&) = delete;
  ConnectionWatch& operator=(const ConnectionWatch&) = delete;

  // Monitors socket (call before it binds); budget_bytes 0: no byte budget.
  // The returned port lives as long as this watch.
  WatchedPort* watch(zmq::socket_t& socket, std::string name, std::uint64_t budget_bytes = 0);
  // Ends the monitor of a watched socket: its owner calls it, on the thread
  // that owns the socket, before closing it, while this watch still runs
  // (libzmq blocks on a monitor event nobody reads).
  static void unwatch(zmq::socket_t& socket);
  void start();
  void stop();

  const ConnectionLimits& limits() const { return limits_; }
  const std::deque<WatchedPort>& ports() const { return ports_; }
  std::uint64_t total_connections() const;

 private:
  struct Connection;
  struct Port;
  struct Unconfirmed;
  void run();
  void on_event(Port& port);
  void accepted(Port& port, int fd);
  void disconnected(Port& port, int fd);
  void verify(Port& port);
  void check_budgets(Port& port);
  bool at_cap(Port& port);
  // Ends the oldest connection of port still silent kSilentGrace after its
  // accept; false when there is none.
  bool evict_silent(Port& port, std::chrono::milliseconds grace);
  bool make_room(Port& port, std::chrono::milliseconds grace);
  static std::chrono::milliseconds newcomer_grace(int fd);
  static bool still_silent(const Port& port, const Unconfirmed& u);

  zmq::context_t& ctx_;
  ConnectionLimits limits_;
  std::deque<WatchedPort> ports_;
  std::vector<Port*> watched_;
  std::size_t total_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace zstore::server
