#include "tools/torture_src/hostile_clients.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>

#include "protocol/chp_codec.h"
#include "protocol/frames.h"

namespace zstore::torture {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

// A non-blocking TCP connection to 127.0.0.1:port (closed on destruction).
class TcpConn {
 public:
  explicit TcpConn(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      ok_ = true;
      return;
    }
    pollfd p{fd_, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    ok_ = errno == EINPROGRESS && ::poll(&p, 1, 500) == 1 && ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
          err == 0;
  }
  ~TcpConn() {
    if (fd_ >= 0) ::close(fd_);
  }
  TcpConn(const TcpConn&) = delete;
  TcpConn& operator=(const TcpConn&) = delete;
  bool ok() const { return ok_; }
  // Sends what the socket takes now; false once the peer is gone.
  bool send_some(std::string_view data) {
    return ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT) >= 0 || errno == EAGAIN;
  }

 private:
  int fd_ = -1;
  bool ok_ = false;
};

// One kind kept up until `until` (or stop) with at most `max` connections.
struct Step {
  zmq::context_t& ctx;
  const HostileTargets& targets;
  int max;
  Clock::time_point until;
  const std::atomic<bool>& stop;

  bool running() const { return !stop && Clock::now() < until; }
  void pause(std::chrono::milliseconds d) const {
    auto end = std::min(until, Clock::now() + d);
    while (!stop && Clock::now() < end)
      std::this_thread::sleep_for(std::min<Clock::duration>(end - Clock::now(), 50ms));
  }
  void hold() const {
    while (running()) pause(200ms);
  }
};

void send_frames(zmq::socket_t& s, const protocol::Frames& frames) {
  for (std::size_t i = 0; i < frames.size(); ++i) {
    auto flags = zmq::send_flags::dontwait | (i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
    try {
      if (!s.send(zmq::buffer(frames[i]), flags))
        return;  // would block: drop the rest (a partial message is discarded)
    } catch (const zmq::error_t&) {
      return;
    }
  }
}

// A socket that takes as little as it can off the wire: its reader stalls
// after a message and a few KiB, so the server's side queues.
zmq::socket_t stalled_socket(zmq::context_t& ctx, zmq::socket_type type, std::uint16_t port) {
  zmq::socket_t s(ctx, type);
  s.set(zmq::sockopt::linger, 0);
  s.set(zmq::sockopt::rcvhwm, 1);
  s.set(zmq::sockopt::rcvbuf, 4096);
  if (type == zmq::socket_type::sub) s.set(zmq::sockopt::subscribe, "");
  s.connect("tcp://127.0.0.1:" + std::to_string(port));
  return s;
}

// Up to step.max of them; fewer when the context or the process is out of sockets or fds.
std::vector<zmq::socket_t> stalled_sockets(const Step& step, zmq::socket_type type, std::uint16_t port) {
  std::vector<zmq::socket_t> held;
  try {
    for (int i = 0; i < step.max && step.running(); ++i) held.push_back(stalled_socket(step.ctx, type, port));
  } catch (const zmq::error_t&) {
  }
  return held;
}

std::uint64_t idle(const Step& step) {
  std::vector<std::uint16_t> ports{step.targets.chp_port, static_cast<std::uint16_t>(step.targets.chp_port + 1),
                                   static_cast<std::uint16_t>(step.targets.chp_port + 2)};
  if (step.targets.http_port) ports.push_back(step.targets.http_port);
  std::vector<std::unique_ptr<TcpConn>> held;
  std::uint64_t made = 0;
  for (int i = 0; i < step.max && step.running(); ++i) {
    auto c = std::make_unique<TcpConn>(ports[static_cast<std::size_t>(i) % ports.size()]);
    made += c->ok();
    held.push_back(std::move(c));
  }
  step.hold();
  return made;
}

std::uint64_t slow_sub(const Step& step) {
  auto held = stalled_sockets(step, zmq::socket_type::sub, static_cast<std::uint16_t>(step.targets.chp_port + 1));
  step.hold();
  return held.size();
}

// DEALERs asking (again every second: asking again renews a slot) and
// never reading the answers.
std::uint64_t ask_unread(const Step& step, const std::vector<protocol::Frames>& requests) {
  auto held = stalled_sockets(step, zmq::socket_type::dealer, step.targets.chp_port);
  std::uint64_t asked = 0;
  for (std::size_t round = 0; step.running(); ++round) {
    for (std::size_t i = 0; i < held.size(); ++i, ++asked)
      send_frames(held[i], requests[(i + round) % requests.size()]);
    step.pause(1000ms);
  }
  return asked;
}

std::uint64_t snapshot(const Step& step) {
  return ask_unread(step, {protocol::chp::encode_icanhaz({"", std::nullopt})});
}

std::uint64_t ha_requests(const Step& step) {
  std::string zero(8, '\0');
  return ask_unread(step, {{std::string(protocol::chp::kPeerSnapshot), ""},
                           {std::string(protocol::chp::kPeerCatchup), zero},
                           {"RECONCILE?", zero}});
}

// Messages the codec refuses (wrong frame counts and sizes), never a valid
// KVSET: a torture run checks every key in the map was written by its writers.
std::vector<protocol::Frames> malformed_messages() {
  return {{""},
          {"ICANHAZ?", "", "123", "extra", "frames"},
          {"KTHXBAI"},
          {"key", "abc"},
          {"key", "abc", "uuid", "", "value"},
          {"key", std::string(8, '\0'), "short-uuid", "", "value"},
          std::vector<std::string>(40, "x"),
          {std::string("\xff\xfe\x00\x01", 4), std::string(70000, 'x')}};
}

std::uint64_t malformed(const Step& step) try {
  zmq::socket_t dealer = stalled_socket(step.ctx, zmq::socket_type::dealer, step.targets.chp_port);
  zmq::socket_t pub(step.ctx, zmq::socket_type::pub);
  pub.set(zmq::sockopt::linger, 0);
  pub.connect("tcp://127.0.0.1:" + std::to_string(step.targets.chp_port + 2));
  auto messages = malformed_messages();
  std::uint64_t sent = 0;
  for (std::size_t i = 0; step.running(); ++i) {
    send_frames(i % 2 ? pub : dealer, messages[i % messages.size()]);
    ++sent;
    if (i % 16 == 0) {  // and bytes that are no ZMTP greeting at all
      TcpConn raw(static_cast<std::uint16_t>(step.targets.chp_port + (i / 16) % 3));
      raw.send_some(std::string("GET / HTTP/1.0\r\n\r\n\xff\x00\x00\x00\x00\x00\x00\x00\x01\x7f", 28));
    }
    step.pause(20ms);
  }
  return sent;
} catch (const zmq::error_t&) {
  step.hold();  // out of sockets: this step does nothing
  return 0;
}

// Half the connections announce a 1 GiB body and trickle it (at most
// 4 MiB each per step); half are slowloris heads, a header byte a second.
std::uint64_t http(const Step& step) {
  if (!step.targets.http_port) return idle(step);
  std::vector<std::unique_ptr<TcpConn>> bodies, heads;
  for (int i = 0; i < step.max && step.running(); ++i) {
    auto c = std::make_unique<TcpConn>(step.targets.http_port);
    if (i % 2 == 0) {
      c->send_some("POST /admin/checkpoint HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1073741824\r\n\r\n");
      bodies.push_back(std::move(c));
    } else {
      c->send_some("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
      heads.push_back(std::move(c));
    }
  }
  const std::string chunk(64 * 1024, 'x');
  for (int tick = 0; step.running(); ++tick) {
    for (auto& b : bodies) {
      if (tick < 64) b->send_some(chunk);
    }
    if (tick % 10 == 0) {
      for (auto& h : heads) h->send_some("X");
    }
    step.pause(100ms);
  }
  return bodies.size() + heads.size();
}

std::uint64_t act(HostileKind kind, const Step& step) {
  switch (kind) {
    case HostileKind::kIdle:
      return idle(step);
    case HostileKind::kSlowSub:
      return slow_sub(step);
    case HostileKind::kSnapshot:
      return snapshot(step);
    case HostileKind::kHa:
      return ha_requests(step);
    case HostileKind::kMalformed:
      return malformed(step);
    case HostileKind::kHttp:
      return http(step);
  }
  return 0;
}

}  // namespace

HostileClients::HostileClients(HostileTargets targets, HostileOptions options)
    : targets_(targets), options_(std::move(options)) {
  ctx_.set(zmq::ctxopt::max_sockets, options_.clients * options_.max_connections + 64);
  if (options_.kinds.empty()) {
    for (int k = 0; k < kHostileKinds; ++k) options_.kinds.push_back(static_cast<HostileKind>(k));
  }
  for (int i = 0; i < options_.clients; ++i) threads_.emplace_back([this, i] { run(i); });
}

HostileClients::~HostileClients() {
  stop_ = true;
  for (auto& t : threads_) t.join();
}

void HostileClients::run(int id) {
  for (std::size_t n = static_cast<std::size_t>(id); !stop_; ++n) {
    HostileKind kind = options_.kinds[n % options_.kinds.size()];
    Step step{ctx_, targets_, options_.max_connections, Clock::now() + options_.step, stop_};
    acts_[static_cast<std::size_t>(kind)] += act(kind, step);
  }
}

std::string HostileClients::summary() const {
  std::string out;
  for (auto kind : options_.kinds) {
    if (!out.empty()) out += ", ";
    out += std::string(hostile_kind_name(kind)) + " " + std::to_string(acts_[static_cast<std::size_t>(kind)].load());
  }
  return out;
}

}  // namespace zstore::torture
