// Send queues in bytes (issue 52): a CHP subscriber that never reads, while
// 300 values of 1 MiB are published, is dropped once it is more than
// --subscriber-buffer-bytes (8 MiB here) behind and counted, so zstored's
// peak RSS grows by far less than the 300 MiB its queue of 100,000 messages
// pinned before; a subscriber that reads receives every value.
#include <boost/test/unit_test.hpp>

#include <string>

#include <zmq.hpp>

#include "tests/ops/ops_support.h"
#include "tests/support/chp_peer.h"

using namespace zstore::testing;
using namespace std::chrono_literals;

namespace {

constexpr int kValues = 300;
constexpr std::uint64_t kValueBytes = 1 << 20;
constexpr std::uint64_t kBudget = 8 << 20;

}  // namespace

BOOST_AUTO_TEST_CASE(subscriber_that_never_reads_is_dropped_past_its_byte_budget) {
  HttpZstored z({"--subscriber-buffer-bytes", std::to_string(kBudget), "--sync", "none"});
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  zmq::context_t ctx;
  ChpPeer good(ctx, "tcp://127.0.0.1", z.server.chp_port());
  BOOST_REQUIRE(good.wait_connected());
  // The subscriber that never reads: small buffers, so libzmq's queue on
  // the server holds what it does not take.
  zmq::socket_t slow(ctx, zmq::socket_type::sub);
  slow.set(zmq::sockopt::rcvbuf, 4096);
  slow.set(zmq::sockopt::rcvhwm, 1);
  slow.set(zmq::sockopt::linger, 0);
  slow.set(zmq::sockopt::subscribe, "");
  slow.connect(z.server.chp_endpoint(1));
  // Subscribed once it has read one update (the last it reads).
  BOOST_REQUIRE(wait_until([&] {
    good.set("/probe", "p");
    zmq::message_t part;
    if (!slow.recv(part, zmq::recv_flags::dontwait)) return false;
    while (part.more()) (void)slow.recv(part, zmq::recv_flags::none);
    return true;
  }));
  pid_t pid = z.server.process()->pid();
  std::uint64_t before_kib = status_kib(pid, "VmRSS");

  const std::string value(kValueBytes, 'v');
  for (int i = 0; i < kValues; ++i) {
    std::string key = "/big/" + std::to_string(i);
    good.set(key, value);
    BOOST_REQUIRE_MESSAGE(good.wait_kvpub(key, scaled(2s)), "the good subscriber missed " << key);
  }
  std::uint64_t peak_kib = status_kib(pid, "VmHWM");
  BOOST_TEST_MESSAGE("RSS before " << before_kib / 1024 << " MiB, peak " << peak_kib / 1024 << " MiB");
#if !defined(__SANITIZE_ADDRESS__)
  // The documented bound for the slow connection (budget + one message; its
  // kernel send buffer is not in RSS) and what the burst costs without it:
  // 100-112 MiB measured with only the good subscriber (RocksDB memtables,
  // malloc's arenas), 110-118 MiB with the slow one, 391 MiB before the budget.
  // (ASan's allocator keeps freed memory in quarantine: RSS says nothing there.)
  const std::uint64_t allowed_kib = (kBudget + kValueBytes + (150 << 20)) / 1024;
  BOOST_CHECK_MESSAGE(peak_kib - before_kib < allowed_kib,
                      "peak RSS grew by " << (peak_kib - before_kib) / 1024 << " MiB");
#endif
  auto m = z.metrics();
  auto dropped = m.find("zstore_slow_subscribers_dropped_total{port=\"chp-updates\"}");
  BOOST_CHECK(dropped != m.end() && dropped->second >= 1);
  std::string log = z.server.log();
  BOOST_CHECK(log.find("subscriber dropped") != std::string::npos);
}
