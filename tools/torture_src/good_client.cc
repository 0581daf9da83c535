#include "tools/torture_src/good_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "tools/harness/chp_peer.h"
#include "tools/harness/harness.h"

namespace zstore::torture {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

// The budget, and when an operation is abandoned (and counted over it):
// times the build's time scale (sanitizers run zstored several times slower).
std::chrono::milliseconds budget() { return testing::scaled(kGoodClientBudget); }
std::chrono::milliseconds give_up() { return testing::scaled(5000ms); }

std::chrono::milliseconds since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
}

// KVSET then its own KVPUB (by UUID), sent again every 250 ms (a new
// peer's PUB and SUB connect asynchronously) until give_up().
bool round_trip(testing::ChpPeer& peer, const std::string& key) {
  auto deadline = Clock::now() + give_up();
  while (Clock::now() < deadline) {
    std::string uuid = peer.set(key, "1");
    auto round = std::min(deadline, Clock::now() + 250ms);
    while (Clock::now() < round) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(round - Clock::now());
      auto kv = peer.wait_kvpub(key, std::max(left, 1ms));
      if (!kv) break;
      if (kv->uuid == uuid) return true;
    }
  }
  return false;
}

// GET /healthz over a fresh connection; whether it answered 200 in time.
bool healthz(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  timeval tv{static_cast<time_t>(give_up().count() / 1000), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string reply;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    std::string req = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
      char buf[512];
      for (ssize_t n; reply.size() < 64 && (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
        reply.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return reply.rfind("HTTP/1.1 200", 0) == 0 || reply.rfind("HTTP/1.0 200", 0) == 0;
}

void raise_max(std::atomic<std::int64_t>& max, std::int64_t v) {
  for (auto cur = max.load(); v > cur && !max.compare_exchange_weak(cur, v);) {
  }
}

}  // namespace

GoodClient::GoodClient(zmq::context_t& ctx, std::uint16_t chp_port, std::uint16_t http_port, Violations& violations)
    : ctx_(ctx), chp_port_(chp_port), http_port_(http_port), violations_(violations), thread_([this] { run(); }) {}

GoodClient::~GoodClient() {
  stop_ = true;
  thread_.join();
  if (over_ > 20) violations_.add("good client slow", "and " + std::to_string(over_ - 20) + " more");
}

void GoodClient::pause() {
  paused_ = true;
  ++epoch_;
}

void GoodClient::resume() { paused_ = false; }

void GoodClient::run() {
  std::unique_ptr<testing::ChpPeer> peer;
  for (std::uint64_t n = 0; !stop_; ++n) {
    if (paused_) {
      peer.reset();  // a fresh one after the restart
      std::this_thread::sleep_for(20ms);
      continue;
    }
    std::uint64_t epoch = epoch_;
    auto t0 = Clock::now();
    if (n % 2 == 0) {
      if (!peer) peer = std::make_unique<testing::ChpPeer>(ctx_, "tcp://127.0.0.1", chp_port_);
      bool ok = round_trip(*peer, std::string(kUncheckedPrefix) + std::to_string(n % 64));
      record("publish round trip", since(t0), ok, epoch);
    } else if (http_port_) {
      bool ok = healthz(http_port_);
      record("/healthz", since(t0), ok, epoch);
    }
    std::this_thread::sleep_for(100ms);
  }
}

void GoodClient::record(const char* what, std::chrono::milliseconds took, bool answered, std::uint64_t epoch) {
  if (paused_ || epoch != epoch_) return;
  bool trip = std::string_view(what) != "/healthz";
  ++(trip ? trips_ : healthz_);
  raise_max(trip ? max_trip_ms_ : max_healthz_ms_, took.count());
  if (answered && took <= budget()) return;
  if (++over_ <= 20) {
    violations_.add("good client slow", std::string(what) + (answered ? " answered in " : " not answered within ") +
                                            std::to_string(took.count()) + " ms (budget " +
                                            std::to_string(budget().count()) + " ms)");
  }
}

std::string GoodClient::summary() const {
  return "round trips " + std::to_string(trips_) + " (max " + std::to_string(max_trip_ms_) + " ms), /healthz " +
         std::to_string(healthz_) + " (max " + std::to_string(max_healthz_ms_) + " ms), over " +
         std::to_string(budget().count() / 1000) + " s: " + std::to_string(over_);
}

}  // namespace zstore::torture
