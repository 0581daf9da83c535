#include "server/reactor/connection_watch.h"

#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <spdlog/spdlog.h>

#include <cstring>
#include <unordered_map>

#include "server/reactor/log.h"

namespace zstore::server {
namespace {

// Who a connected fd is: its two addresses, compared before a shutdown so a
// reused fd is never ended by mistake.
struct Identity {
  sockaddr_storage local{}, peer{};
  socklen_t local_len = 0, peer_len = 0;
};

bool identify(int fd, Identity* id) {
  id->local_len = id->peer_len = sizeof(sockaddr_storage);
  return getsockname(fd, reinterpret_cast<sockaddr*>(&id->local), &id->local_len) == 0 &&
         getpeername(fd, reinterpret_cast<sockaddr*>(&id->peer), &id->peer_len) == 0;
}

bool same(const Identity& a, const Identity& b) {
  return a.local_len == b.local_len && a.peer_len == b.peer_len && std::memcmp(&a.local, &b.local, a.local_len) == 0 &&
         std::memcmp(&a.peer, &b.peer, a.peer_len) == 0;
}

// Bytes handed to the kernel so far (acked + still queued); nullopt if the
// fd cannot tell (not TCP any more).
struct Progress {
  std::uint64_t written = 0;
  bool queue_empty = false;
};

// A whole ZMTP 3 greeting (signature, version, mechanism, as-server,
// filler): what every ZeroMQ peer sends first.
constexpr std::uint64_t kGreetingBytes = 64;

// Bytes received from the peer so far; false if the fd cannot tell.
bool tcp_received(int fd, std::uint64_t* received) {
  tcp_info info{};
  socklen_t len = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return false;
  *received = info.tcpi_bytes_received;
  return true;
}

bool tcp_progress(int fd, Progress* p) {
  tcp_info info{};
  socklen_t len = sizeof(info);
  int queued = 0;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 || ioctl(fd, SIOCOUTQ, &queued) != 0) return false;
  p->written = info.tcpi_bytes_acked + static_cast<std::uint64_t>(queued);
  p->queue_empty = queued == 0;
  return true;
}

}  // namespace

struct ConnectionWatch::Connection {
  Identity id;
  std::uint64_t base_published = 0;  // published_bytes when its send queue was last empty
  std::uint64_t base_written = 0;    // bytes handed to the kernel then
};

struct ConnectionWatch::Unconfirmed {
  int fd;
  Identity id;
  std::chrono::steady_clock::time_point accepted_at;
};

struct ConnectionWatch::Port {
  WatchedPort* stats = nullptr;
  zmq::socket_t monitor;  // PAIR: the monitored socket's events
  std::unordered_map<int, Connection> connections;
  // Connections not yet seen to have sent a greeting, oldest first, with
  // their accept time; verify() drops those gone or greeted since.
  std::deque<Unconfirmed> unconfirmed;
  std::chrono::steady_clock::time_point verified{};
  RateLimiter refused_log{1, std::chrono::seconds(10)};
  RateLimiter slow_log{1, std::chrono::seconds(10)};
};

ConnectionWatch::ConnectionWatch(zmq::context_t& ctx, ConnectionLimits limits) : ctx_(ctx), limits_(limits) {}

ConnectionWatch::~ConnectionWatch() {
  stop();
  for (Port* p : watched_) delete p;
}

WatchedPort* ConnectionWatch::watch(zmq::socket_t& socket, std::string name, std::uint64_t budget_bytes) {
  WatchedPort& stats = ports_.emplace_back();
  stats.name = std::move(name);
  stats.budget_bytes = budget_bytes;
  const std::string endpoint = "inproc://zstore-connection-watch-" + std::to_string(ports_.size()) + "-" +
                               std::to_string(reinterpret_cast<std::uintptr_t>(this));
  if (zmq_socket_monitor(socket.handle(), endpoint.c_str(), ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED) != 0) {
    throw zmq::error_t();
  }
  auto* port = new Port;
  port->stats = &stats;
  port->monitor = zmq::socket_t(ctx_, zmq::socket_type::pair);
  port->monitor.set(zmq::sockopt::rcvhwm, 100000);  // a flood's events: the monitored socket blocks past it
  port->monitor.set(zmq::sockopt::linger, 0);
  port->monitor.connect(endpoint);
  watched_.push_back(port);
  return &stats;
}

void ConnectionWatch::unwatch(zmq::socket_t& socket) {
  if (socket) (void)zmq_socket_monitor(socket.handle(), nullptr, 0);
}

void ConnectionWatch::start() {
  if (watched_.empty() || thread_.joinable()) return;
  thread_ = std::thread([this] { run(); });
}

void ConnectionWatch::stop() {
  stopping_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
}

std::uint64_t ConnectionWatch::total_connections() const {
  std::uint64_t n = 0;
  for (const auto& p : ports_) n += p.connections.load(std::memory_order_relaxed);
  return n;
}

void ConnectionWatch::run() {
  std::vector<zmq::pollitem_t> items;
  bool budgets = false;
  for (Port* p : watched_) {
    items.push_back({p->monitor.handle(), 0, ZMQ_POLLIN, 0});
    budgets = budgets || p->stats->budget_bytes != 0;
  }
  const auto timeout = budgets ? kCheckInterval : std::chrono::milliseconds(100);
  auto next_check = std::chrono::steady_clock::now();
  while (!stopping_.load(std::memory_order_acquire)) {
    try {
      zmq::poll(items, timeout);
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (items[i].revents & ZMQ_POLLIN) on_event(*watched_[i]);
      }
    } catch (const zmq::error_t& e) {
      if (e.num() == ETERM) return;
      spdlog::error("connection watch: {}", e.what());
    }
    auto now = std::chrono::steady_clock::now();
    if (now < next_check) continue;
    next_check = now + kCheckInterval;
    for (Port* p : watched_) {
      if (now - p->verified >= kVerifyInterval) verify(*p);
      if (p->stats->budget_bytes != 0) check_budgets(*p);
    }
  }
}

// Up to 1,000 events of one port per call, so one flooded port does not
// starve the others' checks.
void ConnectionWatch::on_event(Port& port) {
  for (int n = 0; n < 1000; ++n) {
    zmq::message_t head, address;
    if (!port.monitor.recv(head, zmq::recv_flags::dontwait)) return;
    // Two frames (event and value; the endpoint), sent together.
    while (head.more() && port.monitor.recv(address, zmq::recv_flags::none) && address.more()) {
    }
    if (head.size() < 6) continue;
    std::uint16_t event = 0;
    std::uint32_t value = 0;
    std::memcpy(&event, head.data(), sizeof event);
    std::memcpy(&value, static_cast<const char*>(head.data()) + 2, sizeof value);
    int fd = static_cast<int>(value);
    if (event == ZMQ_EVENT_ACCEPTED) accepted(port, fd);
    if (event == ZMQ_EVENT_DISCONNECTED) disconnected(port, fd);
  }
}

bool ConnectionWatch::at_cap(Port& port) {
  auto over = [&] {
    return (limits_.per_port != 0 && port.connections.size() >= limits_.per_port) ||
           (limits_.total != 0 && total_ >= limits_.total);
  };
  if (!over()) return false;
  // Connections that ended without an event no longer count (at most once
  // per kCheckInterval per port, so a flood does not cost a pass each).
  auto now = std::chrono::steady_clock::now();
  if (now - port.verified >= kCheckInterval) verify(port);
  return over();
}

// A newcomer at a cap that has already sent its greeting may have sent a
// request too (the watch reads accepts behind libzmq): ended now, it would
// lose it, so it takes the slot of any silent connection, however young.
// One still silent, whose request waits in its peer's queue until it
// reconnects, takes only that of one silent past the grace.
std::chrono::milliseconds ConnectionWatch::newcomer_grace(int fd) {
  std::uint64_t received = 0;
  return tcp_received(fd, &received) && received >= kGreetingBytes ? std::chrono::milliseconds(0) : kSilentGrace;
}

void ConnectionWatch::accepted(Port& port, int fd) {
  Connection c;
  if (!identify(fd, &c.id)) return;  // already gone
  if (at_cap(port) && !make_room(port, newcomer_grace(fd))) {
    ::shutdown(fd, SHUT_RDWR);  // libzmq sees the end and closes the fd
    port.stats->refused.fetch_add(1, std::memory_order_relaxed);
    port.refused_log.log(spdlog::level::warn,
                         "{}: connection refused, {} connections on this port, {} in total "
                         "(--max-connections-per-port {}, --max-connections {})",
                         port.stats->name, port.connections.size(), total_, limits_.per_port, limits_.total);
    return;
  }
  c.base_published = port.stats->published_bytes.load(std::memory_order_relaxed);
  Progress p;
  if (tcp_progress(fd, &p)) c.base_written = p.written;
  if (port.connections.insert_or_assign(fd, c).second) ++total_;
  port.stats->connections.store(port.connections.size(), std::memory_order_relaxed);
  port.unconfirmed.push_back({fd, c.id, std::chrono::steady_clock::now()});
}

// Whether u is still the connection accepted (not a reused fd) and has
// not sent a whole greeting.
bool ConnectionWatch::still_silent(const Port& port, const Unconfirmed& u) {
  auto it = port.connections.find(u.fd);
  Identity current;
  std::uint64_t received = 0;
  return it != port.connections.end() && same(it->second.id, u.id) && identify(u.fd, &current) && same(current, u.id) &&
         tcp_received(u.fd, &received) && received < kGreetingBytes;
}

bool ConnectionWatch::evict_silent(Port& port, std::chrono::milliseconds grace) {
  const auto now = std::chrono::steady_clock::now();
  while (!port.unconfirmed.empty()) {
    const Unconfirmed& u = port.unconfirmed.front();
    if (!still_silent(port, u)) {
      port.unconfirmed.pop_front();  // gone, or a ZeroMQ peer: never a candidate again
      continue;
    }
    if (now - u.accepted_at < grace) return false;  // the rest are younger
    ::shutdown(u.fd, SHUT_RDWR);
    port.connections.erase(u.fd);  // its DISCONNECTED finds nothing
    --total_;
    port.unconfirmed.pop_front();
    port.stats->evicted.fetch_add(1, std::memory_order_relaxed);
    port.stats->connections.store(port.connections.size(), std::memory_order_relaxed);
    return true;
  }
  return false;
}

// At a cap: a connection of this port silent for grace, or (when only the
// total is reached) of any port, gives its slot up.
bool ConnectionWatch::make_room(Port& port, std::chrono::milliseconds grace) {
  if (evict_silent(port, grace)) return true;
  if (limits_.per_port != 0 && port.connections.size() >= limits_.per_port) return false;
  for (Port* other : watched_) {
    if (other != &port && evict_silent(*other, grace)) return true;
  }
  return false;
}

void ConnectionWatch::disconnected(Port& port, int fd) {
  if (port.connections.erase(fd) != 0) --total_;
  port.stats->connections.store(port.connections.size(), std::memory_order_relaxed);
}

// Forgets connections whose fd is closed or now another connection.
void ConnectionWatch::verify(Port& port) {
  port.verified = std::chrono::steady_clock::now();
  for (auto it = port.connections.begin(); it != port.connections.end();) {
    Identity now;
    if (identify(it->first, &now) && same(now, it->second.id)) {
      ++it;
      continue;
    }
    it = port.connections.erase(it);
    --total_;
  }
  port.stats->connections.store(port.connections.size(), std::memory_order_relaxed);
  // At most one entry per connection still silent: the others leave.
  std::erase_if(port.unconfirmed, [&](const Unconfirmed& u) { return !still_silent(port, u); });
}

void ConnectionWatch::check_budgets(Port& port) {
  const std::uint64_t published = port.stats->published_bytes.load(std::memory_order_relaxed);
  for (auto& [fd, c] : port.connections) {
    Progress p;
    if (!tcp_progress(fd, &p)) continue;
    if (p.queue_empty) {  // caught up: what it was not sent (filtered out) no longer counts
      c.base_published = published;
      c.base_written = p.written;
      continue;
    }
    std::uint64_t sent = published - c.base_published;
    std::uint64_t written = p.written - c.base_written;
    if (sent <= written || sent - written <= port.stats->budget_bytes) continue;
    Identity now;
    if (!identify(fd, &now) || !same(now, c.id)) continue;  // verify() forgets it
    ::shutdown(fd, SHUT_RDWR);
    c.base_published = published;  // counted once: DISCONNECTED follows
    c.base_written = p.written;
    port.stats->slow_dropped.fetch_add(1, std::memory_order_relaxed);
    port.slow_log.log(spdlog::level::warn, "{}: subscriber dropped, {} bytes behind (budget {})", port.stats->name,
                      sent - written, port.stats->budget_bytes);
  }
}

}  // namespace zstore::server
