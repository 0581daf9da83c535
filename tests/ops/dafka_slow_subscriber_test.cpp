// Send queues in bytes (issue 52), the Dafka store's side: a consumer that
// asks for 64 MiB of records (a FETCH answered from the log) and never
// reads is dropped once it is more than --subscriber-buffer-bytes (8 MiB
// here) behind and counted, so zstored's RSS grows by far less than the
// 64 MiB its queue of 10,000 messages would pin; a consumer that reads is
// answered every record, before and after.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <set>
#include <string>

#include <zmq.hpp>

#include "client/dafka_consumer.h"
#include "client/dafka_producer.h"
#include "protocol/dafka_codec.h"
#include "tests/ops/ops_support.h"
#include "tests/support/dafka_node.h"

using namespace zstore::testing;
using namespace std::chrono_literals;
namespace wire = zstore::protocol::dafka;

namespace {

const std::string kTopic = "big";
// Records of 1 MiB: zstored mmaps each block from 1 MiB on (operations.md,
// RocksDB memory), so RSS follows what its queues hold, not the heap kept
// from the records' arrival.
constexpr std::uint32_t kRecords = 64;
constexpr std::uint64_t kRecordBytes = 1 << 20;
constexpr std::uint64_t kBudget = 8 << 20;
const std::string kDropped = "zstore_slow_subscribers_dropped_total{port=\"dafka-store\"}";

struct Store {
  std::uint16_t base = free_port_range(3);  // tower T, T+1; Dafka publisher T+2
  HttpZstored z{{"--tower-port", std::to_string(base), "--dafka-port", std::to_string(base + 2), "--beacon-interval-ms",
                 "100", "--subscriber-buffer-bytes", std::to_string(kBudget), "--sync", "none",
                 "--dafka-max-message-bytes", std::to_string(2 * kRecordBytes)}};
  Store() { BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log()); }
  std::string tower() const { return "tcp://127.0.0.1:" + std::to_string(base); }
  std::string endpoint() const { return "tcp://127.0.0.1:" + std::to_string(base + 2); }
  double dropped() {
    auto m = z.metrics();
    auto it = m.find(kDropped);
    return it == m.end() ? -1 : it->second;
  }
};

void produce(Store& s) {
  zstore::client::dafka::ProducerOptions po;
  po.node.towers = {s.tower()};
  po.node.beacon_interval = 100ms;
  po.head_interval = 200ms;
  zstore::client::dafka::Producer producer(po);
  BOOST_REQUIRE(producer.wait_connected(scaled(15s)));
  for (std::uint32_t i = 0; i < kRecords; ++i) producer.publish(kTopic, std::string(kRecordBytes, 'a' + i % 26));
  BOOST_REQUIRE(producer.flush(scaled(30s)));
}

// The partition (producer address) of kTopic, from a DIRECT-HEAD.
std::string partition_of(ScriptedDafkaNode& c) {
  std::string partition;
  auto head = c.wait_for(
      [&](const wire::Message& m) {
        auto* h = std::get_if<wire::DirectHead>(&m);
        if (h && h->topic == c.address() && h->subject == kTopic) partition = h->partition;
        return h && h->sequence == kRecords - 1;
      },
      scaled(15s),
      [&] {
        c.send(wire::GetHeads{kTopic, c.address()});
      });
  BOOST_REQUIRE_MESSAGE(head, "no DIRECT-HEAD for every record");
  return partition;
}

// Whether c is answered every record of the partition, in full, FETCHed
// kWindow at a time (so a late check of the watch cannot find it behind).
bool fetch_all(ScriptedDafkaNode& c, const std::string& partition) {
  constexpr std::uint32_t kWindow = 4;
  std::set<std::uint64_t> got;
  bool whole = true;
  for (std::uint32_t from = 0; from < kRecords; from += kWindow) {
    c.wait_for(
        [&](const wire::Message& m) {
          auto* d = std::get_if<wire::DirectRecord>(&m);
          if (d && d->topic == c.address()) {
            got.insert(d->sequence);
            whole = whole && d->content.size() == kRecordBytes;
          }
          return got.size() >= from + kWindow;
        },
        scaled(10s),
        [&] {
          c.send(wire::Fetch{partition, c.address(), kTopic, from, kWindow});
        });
  }
  BOOST_TEST_MESSAGE("answered " << got.size() << " of " << kRecords << " records");
  return got.size() == kRecords && whole;
}

// A consumer that never reads: small buffers, so libzmq's queue on the
// server holds what it does not take. Subscribed to DIRECT-RECORDs for
// `address` once it has read one (the last it reads).
zmq::socket_t slow_subscriber(zmq::context_t& ctx, Store& s, ScriptedDafkaNode& sender, const std::string& partition,
                              const std::string& address) {
  zmq::socket_t slow(ctx, zmq::socket_type::sub);
  slow.set(zmq::sockopt::rcvbuf, 4096);
  slow.set(zmq::sockopt::rcvhwm, 1);
  slow.set(zmq::sockopt::linger, 0);
  slow.set(zmq::sockopt::subscribe, wire::subscription(wire::MsgId::kDirectRecord, address));
  slow.connect(s.endpoint());
  BOOST_REQUIRE(wait_until([&] {
    sender.tick();
    sender.send(wire::Fetch{partition, address, kTopic, kRecords - 1, 1});
    zmq::message_t part;
    if (!slow.recv(part, zmq::recv_flags::dontwait)) return false;
    while (part.more()) (void)slow.recv(part, zmq::recv_flags::none);
    return true;
  }));
  return slow;
}

}  // namespace

BOOST_AUTO_TEST_CASE(dafka_consumer_that_never_reads_is_dropped_past_its_byte_budget) {
  Store s;
  produce(s);
  zmq::context_t ctx;
  ScriptedDafkaNode good(ctx, s.base, {'D', 'E', 'L'});
  good.connect(s.endpoint());
  const std::string partition = partition_of(good);
  BOOST_REQUIRE(fetch_all(good, partition));
  const std::string slow_address = random_dafka_address();
  zmq::socket_t slow = slow_subscriber(ctx, s, good, partition, slow_address);
  BOOST_REQUIRE_EQUAL(s.dropped(), 0);
  pid_t pid = s.z.server.process()->pid();
  BOOST_REQUIRE(reset_peak_rss(pid));  // the burst of records produced is not what is measured
  std::uint64_t before_kib = status_kib(pid, "VmRSS");

  // 64 MiB answered to the consumer that never reads.
  good.send(wire::Fetch{partition, slow_address, kTopic, 0, kRecords});
  BOOST_CHECK_MESSAGE(wait_until([&] { return s.dropped() >= 1; }, 10s), "the slow consumer was not dropped");
  std::uint64_t peak_kib = status_kib(pid, "VmHWM");
  std::uint64_t after_kib = status_kib(pid, "VmRSS");
  BOOST_TEST_MESSAGE("RSS before " << before_kib / 1024 << " MiB, peak " << peak_kib / 1024 << " MiB, after "
                                   << after_kib / 1024 << " MiB");
#if !defined(__SANITIZE_ADDRESS__)
  // The documented bound for the slow connection: the budget, one message
  // and what is published in one check (FETCH answers: at most half the
  // budget), with 8 MiB for the rest (the FETCH's reads, malloc): 9-10 MiB
  // measured, 11-36 MiB before the answers were paced. Without the budget its
  // queue holds all 64 MiB (less the kernel's buffers) for as long as it stays.
  // (ASan's allocator keeps freed memory in quarantine: RSS says nothing there.)
  const std::uint64_t allowed_kib = (kBudget + kBudget / 2 + kRecordBytes + (8 << 20)) / 1024;
  BOOST_CHECK_MESSAGE(peak_kib - before_kib < allowed_kib,
                      "peak RSS grew by " << (peak_kib - before_kib) / 1024 << " MiB");
#endif
  BOOST_CHECK(s.z.server.log().find("dafka-store: subscriber dropped") != std::string::npos);
  // The consumer that reads is still answered in full.
  BOOST_CHECK(fetch_all(good, partition));
}

// A FETCH answer larger than the budget, to our consumer catching up from
// the first record: the store paces FETCH answers to half the budget per
// 20 ms (200 MiB/s here), which a reader on loopback keeps up with; one that
// falls a budget behind anyway (a slower link) is dropped, connects again
// and FETCHes from where it got to. Either way it is delivered every record,
// in order.
BOOST_AUTO_TEST_CASE(our_consumer_catching_up_on_more_than_the_budget_gets_every_record) {
  Store s;
  produce(s);
  zstore::client::dafka::ConsumerOptions co;
  co.node.towers = {s.tower()};
  co.node.beacon_interval = 100ms;
  co.reset = zstore::client::dafka::ConsumerOptions::Reset::kEarliest;
  co.fetch_retry = 200ms;
  co.get_heads_retry = 300ms;
  zstore::client::dafka::Consumer consumer(co);
  consumer.subscribe({kTopic});
  std::uint64_t next = 0;
  for (auto deadline = std::chrono::steady_clock::now() + scaled(30s);
       next < kRecords && std::chrono::steady_clock::now() < deadline;) {
    auto r = consumer.poll(200ms);
    if (!r) continue;
    BOOST_REQUIRE_EQUAL(r->offset, next);
    BOOST_REQUIRE_EQUAL(r->content.size(), kRecordBytes);
    ++next;
  }
  BOOST_CHECK_EQUAL(next, kRecords);
  BOOST_TEST_MESSAGE("dropped while catching up: " << s.dropped());
}
