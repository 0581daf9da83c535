// Resource limits of a real zstored: thousands of idle clients, a subscriber
// that never reads, clients hammering the snapshot port. In every case the
// server must keep serving everyone else (updates published with bounded
// latency, snapshots answered). See docs/torture.md for the HWM policy.
#include <boost/test/unit_test.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include <zmq.hpp>

#include "tests/support/chp_peer.h"
#include "tests/support/test_support.h"
#include "tests/support/zstored.h"

using zstore::testing::ChpPeer;
using zstore::testing::wait_until;
using zstore::testing::Zstored;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// Raises our soft RLIMIT_NOFILE (inherited by the zstored we start) towards
// want; returns the new soft limit.
rlim_t raise_nofile(rlim_t want) {
  rlimit r{};
  getrlimit(RLIMIT_NOFILE, &r);
  r.rlim_cur = std::max(r.rlim_cur, std::min(want, r.rlim_max));
  setrlimit(RLIMIT_NOFILE, &r);
  getrlimit(RLIMIT_NOFILE, &r);
  return r.rlim_cur;
}

std::size_t open_fds(pid_t pid) {
  std::error_code ec;
  std::size_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

// Resident memory of a process in KB (VmRSS), 0 if unknown.
std::size_t rss_kb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoul(line.substr(6));
  }
  return 0;
}

// Sets `count` keys and returns the worst set -> KVPUB latency seen by peer.
std::chrono::milliseconds worst_latency(ChpPeer& peer, const std::string& prefix, int count) {
  std::chrono::milliseconds worst{0};
  for (int i = 0; i < count; ++i) {
    std::string key = prefix + std::to_string(i);
    auto t0 = Clock::now();
    peer.set(key, "v" + std::to_string(i));
    auto kv = peer.wait_kvpub(key, 10s);
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
    if (!kv) return std::chrono::milliseconds::max();
    worst = std::max(worst, took);
  }
  return worst;
}

std::string value_of(std::size_t bytes, int i) {
  std::string v = std::to_string(i) + ":";
  v.resize(bytes, 'x');
  return v;
}

}  // namespace

BOOST_AUTO_TEST_CASE(thousands_of_idle_clients_do_not_stop_service) {
  constexpr int kIdle = 2400;
  BOOST_REQUIRE_GE(raise_nofile(3 * kIdle + 1000), rlim_t(3 * kIdle + 200));
  Zstored z;
  BOOST_REQUIRE_MESSAGE(z.start(), z.log());
  std::size_t base_fds = open_fds(z.process()->pid());

  zmq::context_t idle_ctx;
  idle_ctx.set(zmq::ctxopt::max_sockets, 2 * kIdle);
  std::vector<zmq::socket_t> idle;
  for (int i = 0; i < kIdle; ++i) {
    bool sub = i % 3 != 0;  // two thirds subscribers, one third snapshot-port dealers
    idle.emplace_back(idle_ctx, sub ? zmq::socket_type::sub : zmq::socket_type::dealer);
    idle.back().set(zmq::sockopt::linger, 0);
    if (sub) idle.back().set(zmq::sockopt::subscribe, "");
    idle.back().connect(z.chp_endpoint(sub ? 1 : 0));
  }
  BOOST_REQUIRE_MESSAGE(wait_until([&] { return open_fds(z.process()->pid()) >= base_fds + kIdle; }, 60s),
                        "zstored holds " << open_fds(z.process()->pid()) << " fds, wanted " << base_fds + kIdle);
  BOOST_TEST_MESSAGE("zstored fds with " << kIdle << " idle clients: " << open_fds(z.process()->pid()));

  zmq::context_t ctx;
  ChpPeer peer(ctx, "tcp://127.0.0.1", z.chp_port());
  BOOST_REQUIRE(peer.wait_connected(20s));
  auto worst = worst_latency(peer, "/busy/", 50);
  BOOST_TEST_MESSAGE("worst set->KVPUB latency with idle clients: " << worst.count() << " ms");
  BOOST_TEST(worst < zstore::testing::scaled(1000ms));  // 2 s under ASan's slowdown
  auto snap = peer.snapshot("/busy/", 10s);
  BOOST_REQUIRE(snap.has_value());
  BOOST_TEST(snap->entries.size() == 50u);
  // The idle subscribers were served the updates too (sample a few).
  for (int i = 1; i < kIdle; i += kIdle / 7) {
    zmq::pollitem_t item{idle[i].handle(), 0, ZMQ_POLLIN, 0};
    BOOST_TEST(zmq::poll(&item, 1, 5s) == 1, "idle subscriber " << i << " got nothing");
  }
  BOOST_TEST(z.process()->running());
}

BOOST_AUTO_TEST_CASE(a_subscriber_that_never_reads_does_not_hold_back_others) {
  Zstored z;
  BOOST_REQUIRE_MESSAGE(z.start(), z.log());
  zmq::context_t ctx;
  zmq::socket_t slow(ctx, zmq::socket_type::sub);
  slow.set(zmq::sockopt::linger, 0);
  slow.set(zmq::sockopt::rcvhwm, 10);
  slow.set(zmq::sockopt::rcvbuf, 4096);
  slow.set(zmq::sockopt::subscribe, "");
  slow.connect(z.chp_endpoint(1));
  ChpPeer peer(ctx, "tcp://127.0.0.1", z.chp_port());
  BOOST_REQUIRE(peer.wait_connected(20s));
  zmq::pollitem_t slow_item{slow.handle(), 0, ZMQ_POLLIN, 0};
  BOOST_REQUIRE_MESSAGE(zmq::poll(&slow_item, 1, 10s) == 1 || wait_until([&] {
                          peer.set("/probe", "1");
                          return zmq::poll(&slow_item, 1, 100ms) == 1;
                        }),
                        "the slow subscriber never connected");

  // Far more updates than the publisher's high-water mark (100,000) plus
  // socket buffers, sent in paced chunks so the collector never drops any.
  constexpr int kUpdates = 150000, kChunk = 5000;
  std::uint64_t first = 0, last = 0, received = 0;
  auto deadline = Clock::now() + 90s;
  for (int sent = 0; sent < kUpdates && Clock::now() < deadline;) {
    for (int i = 0; i < kChunk; ++i, ++sent) peer.set("/flood/" + std::to_string(sent % 1000), value_of(200, sent));
    while (Clock::now() < deadline) {
      auto u = peer.next_update(5s);
      BOOST_REQUIRE_MESSAGE(u.has_value(), "the reading subscriber stalled after " << received << " updates");
      auto* kv = std::get_if<zstore::protocol::chp::KvMsg>(&*u);
      if (!kv || kv->key.rfind("/flood/", 0) != 0) continue;
      if (first == 0) first = kv->sequence;
      BOOST_REQUIRE_MESSAGE(last == 0 || kv->sequence == last + 1,
                            "gap for the reading subscriber: " << last << " -> " << kv->sequence);
      last = kv->sequence;
      if (++received == static_cast<std::uint64_t>(sent)) break;
    }
  }
  BOOST_REQUIRE_EQUAL(received, static_cast<std::uint64_t>(kUpdates));

  // The slow subscriber lost what went past the HWM instead of holding the
  // server back: it holds far fewer than everything published.
  std::uint64_t slow_got = 0;
  while (zmq::poll(&slow_item, 1, 500ms) == 1) {
    zmq::message_t part;
    while (true) {
      (void)slow.recv(part);
      if (!part.more()) break;
    }
    ++slow_got;
  }
  BOOST_TEST_MESSAGE("slow subscriber kept " << slow_got << " of " << kUpdates << " updates");
  BOOST_TEST(slow_got < static_cast<std::uint64_t>(kUpdates));
  BOOST_TEST(slow_got > 0u);
}

BOOST_AUTO_TEST_CASE(snapshot_storms_do_not_delay_updates) {
  Zstored z;
  BOOST_REQUIRE_MESSAGE(z.start(), z.log());
  zmq::context_t ctx;
  ChpPeer writer(ctx, "tcp://127.0.0.1", z.chp_port());
  BOOST_REQUIRE(writer.wait_connected(20s));
  constexpr int kKeys = 5000;
  for (int i = 0; i < kKeys; ++i) writer.set("/big/" + std::to_string(i), value_of(200, i));
  BOOST_REQUIRE(writer.wait_kvpub("/big/" + std::to_string(kKeys - 1), 20s));

  // One client loads full snapshots back to back; 300 others each ask for
  // one and never read it (more than the 256 concurrent sessions allowed).
  std::size_t rss_before = rss_kb(z.process()->pid());
  std::atomic<bool> stop{false};
  std::atomic<int> complete{0}, short_snapshots{0};
  std::thread looper([&] {
    ChpPeer p(ctx, "tcp://127.0.0.1", z.chp_port());
    while (!stop) {
      auto s = p.snapshot("", 20s);
      if (!s) continue;
      if (s->entries.size() < kKeys) short_snapshots++;
      complete++;
    }
  });
  std::vector<zmq::socket_t> hogs;
  for (int i = 0; i < 300; ++i) {
    hogs.emplace_back(ctx, zmq::socket_type::dealer);
    hogs.back().set(zmq::sockopt::linger, 0);
    hogs.back().set(zmq::sockopt::rcvhwm, 10);
    hogs.back().connect(z.chp_endpoint(0));
    hogs.back().send(zmq::str_buffer("ICANHAZ?"), zmq::send_flags::sndmore);
    hogs.back().send(zmq::str_buffer(""), zmq::send_flags::none);
  }
  BOOST_REQUIRE(wait_until([&] { return complete.load() >= 1; }, 30s));

  auto worst = worst_latency(writer, "/live/", 100);
  BOOST_TEST_MESSAGE("worst set->KVPUB latency during snapshot storms: " << worst.count() << " ms, snapshots "
                                                                         << complete.load());
  BOOST_TEST(worst < zstore::testing::scaled(1000ms));  // 2 s under ASan's slowdown
  BOOST_TEST(wait_until([&] { return complete.load() >= 3; }, 30s));
  stop = true;
  looper.join();
  BOOST_TEST(short_snapshots.load() == 0);
  BOOST_TEST_MESSAGE("zstored RSS " << rss_before / 1024 << " MB before the storm, "
                                    << rss_kb(z.process()->pid()) / 1024 << " MB with 300 unread snapshots");
  BOOST_TEST(z.process()->running());
}
