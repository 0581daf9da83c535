// zstored as a Dafka store, against scripted fake peers (raw ZeroMQ sockets
// and the codec): a fake producer or consumer binds a PUB on a free port,
// beacons it to zstored's embedded tower so the store connects to it, and
// connects its SUB to the store's XPUB. Sends that race the PUB/SUB slow
// joiner are repeated until the answer arrives, under a deadline.
#include <sched.h>
#include <signal.h>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "protocol/beacon.h"
#include "protocol/dafka_codec.h"
#include "tests/ops/ops_support.h"
#include "tests/support/dafka_node.h"
#include "tests/support/zstored.h"

using namespace std::chrono_literals;
using zstore::testing::Zstored;
namespace dafka = zstore::protocol::dafka;
using Clock = std::chrono::steady_clock;

namespace {

const std::string kTopic = "hello";

using FakeNode = zstore::testing::ScriptedDafkaNode;

template <typename T>
std::function<bool(const dafka::Message&)> is(std::function<bool(const T&)> pred) {
  return [pred](const dafka::Message& m) {
    auto* t = std::get_if<T>(&m);
    return t && pred(*t);
  };
}

struct Store {
  std::uint16_t base;  // tower T, T+1; Dafka publisher at T+2
  Zstored zstored;
  std::string address;

  explicit Store(std::optional<std::uint16_t> tower = std::nullopt, const std::vector<std::string>& extra = {})
      : base(zstore::testing::free_port_range(3)), zstored(with(args(base, tower), extra)) {
    BOOST_REQUIRE_MESSAGE(zstored.start(), "zstored did not start: " + zstored.log());
    address = node_address();
  }
  // The default arguments, with a flag of extra (and its value) in place of
  // the default's.
  static std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& extra) {
    for (const auto& flag : extra) {
      auto it = std::find(a.begin(), a.end(), flag);
      if (flag.starts_with("--") && it != a.end() && it + 1 != a.end()) a.erase(it, it + 2);
    }
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  static std::vector<std::string> args(std::uint16_t base, std::optional<std::uint16_t> tower) {
    std::vector<std::string> a = {"--dafka-port", std::to_string(base + 2), "--beacon-interval-ms",
                                  "100",          "--beacon-timeout-ms",    "3000"};
    if (tower) {
      a.insert(a.end(), {"--tower-port", "0", "--towers", "tcp://127.0.0.1:" + std::to_string(*tower)});
    } else {
      a.insert(a.end(), {"--tower-port", std::to_string(base)});
    }
    return a;
  }
  std::string node_address() const {
    std::string log = zstored.log();
    auto at = log.rfind("(node ");
    BOOST_REQUIRE(at != std::string::npos);
    return log.substr(at + 6, 32);
  }
  std::uint16_t tower() const { return base; }
  std::string endpoint() const { return "tcp://127.0.0.1:" + std::to_string(base + 2); }
};

struct Env {
  zmq::context_t ctx;
  Store store;
  Env() = default;
  explicit Env(const std::vector<std::string>& extra) : store(std::nullopt, extra) {}
  std::unique_ptr<FakeNode> producer() {
    auto p = std::make_unique<FakeNode>(ctx, store.tower(), std::vector<char>{'K', 'F'});
    p->connect(store.endpoint());
    return p;
  }
  std::unique_ptr<FakeNode> consumer() {
    auto c = std::make_unique<FakeNode>(ctx, store.tower(), std::vector<char>{'D', 'E', 'L'});
    c->connect(store.endpoint());
    return c;
  }
};

dafka::Record record(const FakeNode& p, std::uint64_t seq) {
  return dafka::Record{kTopic, p.address(), kTopic, seq, "content-" + std::to_string(seq)};
}

// Sends the records (again every 200 ms) until an ACK reaches `seq`.
std::optional<dafka::Ack> produce_until_acked(FakeNode& p, const std::vector<std::uint64_t>& seqs, std::uint64_t seq) {
  auto m = p.wait_for(is<dafka::Ack>([&](const dafka::Ack& a) { return a.sequence >= seq; }), 15s, [&] {
    for (auto s : seqs) p.send(record(p, s));
  });
  if (!m) return std::nullopt;
  return std::get<dafka::Ack>(*m);
}

std::vector<std::uint64_t> range(std::uint64_t n) {
  std::vector<std::uint64_t> v;
  for (std::uint64_t i = 0; i < n; ++i) v.push_back(i);
  return v;
}

// Asks for the heads of kTopic until the head of partition reaches seq.
bool wait_head(FakeNode& c, const std::string& partition, std::uint64_t seq, const std::function<void()>& also = {}) {
  return c
      .wait_for(is<dafka::DirectHead>([&](const dafka::DirectHead& h) {
                  return h.topic == c.address() && h.partition == partition && h.subject == kTopic && h.sequence == seq;
                }),
                15s,
                [&] {
                  c.send(dafka::GetHeads{kTopic, c.address()});
                  if (also) also();
                })
      .has_value();
}

// Collects DIRECT-RECORDs addressed to c: n of them, then none for `quiet`.
std::vector<dafka::DirectRecord> collect(FakeNode& c, std::size_t n, std::chrono::milliseconds quiet = 500ms) {
  std::vector<dafka::DirectRecord> got;
  auto until = [&](std::size_t k) {
    return is<dafka::DirectRecord>([&got, &c, k](const dafka::DirectRecord& d) {
      if (d.topic == c.address()) got.push_back(d);
      return got.size() >= k;
    });
  };
  c.wait_for(until(n), 15s);
  if (got.size() == n) c.wait_for(until(n + 1), quiet);
  return got;
}

}  // namespace

BOOST_AUTO_TEST_CASE(records_are_acked_cumulatively_after_they_are_stored) {
  Env env;
  auto p = env.producer();
  auto ack = produce_until_acked(*p, {0, 1, 2}, 2);
  BOOST_REQUIRE_MESSAGE(ack, env.store.zstored.log());
  BOOST_CHECK_EQUAL(ack->topic, p->address());
  BOOST_CHECK_EQUAL(ack->subject, kTopic);
  BOOST_CHECK_EQUAL(ack->sequence, 2u);
}

// --dafka-max-message-bytes bounds a record's content (and every frame): a
// record within it is stored and ACKed, a larger one never is (the SUB
// drops the publisher's connection at such a frame), and the producer's
// next record within it is stored once the store has connected again,
// which /metrics counts.
BOOST_AUTO_TEST_CASE(a_record_larger_than_the_message_limit_is_not_stored) {
  const std::uint16_t http = zstore::testing::free_port();
  Env env({"--dafka-max-message-bytes", "65536", "--http-port", std::to_string(http)});
  auto reconnects = [&] {
    return zstore::testing::metric(zstore::testing::scrape_metrics(http), "zstore_dafka_peer_reconnects_total");
  };
  auto p = env.producer();
  auto sized = [&](std::uint64_t seq, std::size_t bytes) {
    return dafka::Record{kTopic, p->address(), kTopic, seq, std::string(bytes, 'r')};
  };
  auto acked = [&](std::uint64_t seq, std::size_t bytes, std::chrono::milliseconds within) {
    return p
        ->wait_for(is<dafka::Ack>([&](const dafka::Ack& a) { return a.sequence >= seq; }), within,
                   [&] { p->send(sized(seq, bytes)); })
        .has_value();
  };
  BOOST_REQUIRE_MESSAGE(acked(0, 65536, 15s), env.store.zstored.log());
  BOOST_CHECK_EQUAL(reconnects(), 0);
  BOOST_CHECK(!acked(1, 65537 + 64, 2s));
  BOOST_CHECK_MESSAGE(acked(1, 100, 15s), env.store.zstored.log());
  BOOST_CHECK_GE(reconnects(), 1);
}

BOOST_AUTO_TEST_CASE(gap_is_fetched_and_the_ack_covers_the_records_kept_after_it) {
  Env env;
  auto p = env.producer();
  BOOST_REQUIRE(produce_until_acked(*p, {0}, 0));
  p->send(record(*p, 1));
  p->send(record(*p, 3));
  auto m = p->wait_for(is<dafka::Fetch>([&](const dafka::Fetch& f) { return f.topic == p->address(); }));
  BOOST_REQUIRE(m);
  auto fetch = std::get<dafka::Fetch>(*m);
  BOOST_CHECK_EQUAL(fetch.address, env.store.address);
  BOOST_CHECK_EQUAL(fetch.subject, kTopic);
  BOOST_CHECK_EQUAL(fetch.sequence, 2u);
  BOOST_CHECK_EQUAL(fetch.count, 1u);
  p->send(dafka::DirectRecord{fetch.address, p->address(), kTopic, 2, "content-2"});
  auto ack = p->wait_for(is<dafka::Ack>([](const dafka::Ack& a) { return a.sequence == 3; }));
  BOOST_CHECK(ack);
}

BOOST_AUTO_TEST_CASE(get_heads_and_fetch_return_exactly_what_was_asked) {
  Env env;
  auto p = env.producer();
  BOOST_REQUIRE(produce_until_acked(*p, range(10), 9));
  auto c = env.consumer();
  BOOST_REQUIRE(wait_head(*c, p->address(), 9));
  c->send(dafka::Fetch{p->address(), c->address(), kTopic, 2, 3});
  auto got = collect(*c, 3);
  BOOST_REQUIRE_EQUAL(got.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    BOOST_CHECK_EQUAL(got[i].sequence, 2 + i);
    BOOST_CHECK_EQUAL(got[i].partition, p->address());
    BOOST_CHECK_EQUAL(got[i].subject, kTopic);
    BOOST_CHECK_EQUAL(got[i].content, "content-" + std::to_string(2 + i));
  }
  // Past the head: only what is stored.
  c->send(dafka::Fetch{p->address(), c->address(), kTopic, 8, 100});
  got = collect(*c, 2);
  BOOST_CHECK_EQUAL(got.size(), 2u);
}

BOOST_AUTO_TEST_CASE(store_hello_then_consumer_hello_gets_direct_heads) {
  Env env;
  auto p = env.producer();
  BOOST_REQUIRE(produce_until_acked(*p, {0, 1}, 1));
  auto c = env.consumer();  // subscribes to L+address on the store's XPUB
  auto hello = c->wait_for(is<dafka::StoreHello>([&](const dafka::StoreHello& h) { return h.topic == c->address(); }));
  BOOST_REQUIRE(hello);
  auto store = std::get<dafka::StoreHello>(*hello).address;
  BOOST_CHECK_EQUAL(store, env.store.address);
  auto head = c->wait_for(
      is<dafka::DirectHead>([&](const dafka::DirectHead& h) { return h.partition == p->address() && h.sequence == 1; }),
      10s, [&] {
        c->send(dafka::ConsumerHello{store, c->address(), {kTopic, "other"}});
      });
  BOOST_CHECK(head);
}

BOOST_AUTO_TEST_CASE(every_acked_record_survives_sigkill_byte_exact) {
  Env env;
  auto p = env.producer();
  auto content = [](std::uint64_t i) { return std::string("\0\xff", 2) + std::string(i % 300, char('a' + i % 26)); };
  BOOST_REQUIRE(p->wait_for(is<dafka::Ack>([](const dafka::Ack&) { return true; }), 15s, [&] {
    p->send(dafka::Record{kTopic, p->address(), kTopic, 0, content(0)});
  }));
  for (std::uint64_t i = 1; i < 2000; ++i) p->send(dafka::Record{kTopic, p->address(), kTopic, i, content(i)});
  std::uint64_t acked = 0;
  p->wait_for(is<dafka::Ack>([&](const dafka::Ack& a) {
    acked = std::max(acked, a.sequence);
    return acked >= 500;
  }));
  env.store.zstored.kill(SIGKILL);
  env.store.zstored.wait_exit();
  // Every ACK that reached us came from the dead process; it counts too.
  while (auto m = p->wait_for(is<dafka::Ack>([&](const dafka::Ack& a) {
                                acked = std::max(acked, a.sequence);
                                return true;
                              }),
                              50ms)) {
  }
  BOOST_REQUIRE_GE(acked, 500u);
  BOOST_REQUIRE(env.store.zstored.restart());
  BOOST_CHECK_EQUAL(env.store.node_address(), env.store.address);  // the same node
  auto c = env.consumer();
  c->wait_for(is<dafka::DirectHead>([&](const dafka::DirectHead& h) { return h.sequence >= acked; }), 15s, [&] {
    c->send(dafka::GetHeads{kTopic, c->address()});
  });
  c->send(dafka::Fetch{p->address(), c->address(), kTopic, 0, static_cast<std::uint32_t>(acked + 1)});
  auto got = collect(*c, acked + 1, 100ms);
  BOOST_REQUIRE_EQUAL(got.size(), acked + 1);
  for (std::uint64_t i = 0; i <= acked; ++i) {
    BOOST_REQUIRE_EQUAL(got[i].sequence, i);
    BOOST_REQUIRE(got[i].content == content(i));
  }
}

BOOST_AUTO_TEST_CASE(a_second_store_replicates_from_the_first_by_fetch) {
  Env env;
  auto p = env.producer();
  BOOST_REQUIRE(produce_until_acked(*p, range(10), 9));
  Store second(env.store.tower());  // beacons to the first store's tower
  // The producer forgets its records (answers no FETCH) and only sends HEADs:
  // the second store can get them from the first store alone.
  auto c = std::make_unique<FakeNode>(env.ctx, env.store.tower(), std::vector<char>{'D', 'E', 'L'});
  c->connect(second.endpoint());
  BOOST_REQUIRE_MESSAGE(wait_head(*c, p->address(), 9,
                                  [&] {
                                    p->send(dafka::Head{kTopic, p->address(), kTopic, 9});
                                    p->tick();
                                  }),
                        second.zstored.log());
  c->send(dafka::Fetch{p->address(), c->address(), kTopic, 0, 10});
  auto got = collect(*c, 10);
  BOOST_REQUIRE_EQUAL(got.size(), 10u);
  for (std::uint64_t i = 0; i < 10; ++i) BOOST_CHECK_EQUAL(got[i].content, "content-" + std::to_string(i));
}

BOOST_AUTO_TEST_CASE(malformed_input_is_dropped_and_the_store_keeps_serving) {
  Env env;
  auto p = env.producer();
  auto rogue = env.producer();
  std::string partition = p->address();
  auto garbage = [&] {
    rogue->send_raw({"M"});
    rogue->send_raw({std::string("Mhello\0\x02", 8), "x"});
    rogue->send_raw({"Xsomething"});
    rogue->send_raw({std::string("F") + partition + std::string("\0\x01\x20", 3)});
    rogue->send_raw({""});
    rogue->send_raw({std::string("D") + std::string(300, 'z'), "a", "b"});
    rogue->send(dafka::Record{kTopic, "not-an-address", kTopic, 0, "x"});
    rogue->send(dafka::Fetch{partition, "not-an-address", kTopic, 0, 10});
    rogue->send(dafka::Head{kTopic, "bad", kTopic, 5});
    rogue->send(dafka::ConsumerHello{"someone-else", rogue->address(), {kTopic}});
    rogue->send(dafka::Fetch{partition, rogue->address(), kTopic, 0, 0xffffffffu});
  };
  BOOST_REQUIRE(p->wait_for(is<dafka::Ack>([](const dafka::Ack& a) { return a.sequence == 0; }), 15s, [&] {
    garbage();
    rogue->tick();
    p->send(record(*p, 0));
  }));
  BOOST_REQUIRE(zstore::testing::wait_until([&] {
    garbage();
    return env.store.zstored.log().find("dropped malformed") != std::string::npos;
  }));
  BOOST_CHECK(produce_until_acked(*p, {0, 1}, 1));
  BOOST_CHECK(env.store.zstored.process()->running());
}

BOOST_AUTO_TEST_CASE(head_of_an_unknown_partition_fetches_from_zero) {
  Env env;
  auto p = env.producer();
  auto m = p->wait_for(is<dafka::Fetch>([&](const dafka::Fetch& f) { return f.topic == p->address(); }), 15s, [&] {
    p->send(dafka::Head{kTopic, p->address(), kTopic, 4});
  });
  BOOST_REQUIRE(m);
  auto fetch = std::get<dafka::Fetch>(*m);
  BOOST_CHECK_EQUAL(fetch.sequence, 0u);
  BOOST_CHECK_EQUAL(fetch.count, 5u);
  for (std::uint64_t i = 0; i < 5; ++i) {
    p->send(dafka::DirectRecord{fetch.address, p->address(), kTopic, i, "content-" + std::to_string(i)});
  }
  BOOST_CHECK(p->wait_for(is<dafka::Ack>([](const dafka::Ack& a) { return a.sequence == 4; })));
}

BOOST_AUTO_TEST_CASE(an_unanswered_fetch_is_sent_again) {
  Env env;
  auto p = env.producer();
  BOOST_REQUIRE(produce_until_acked(*p, {0}, 0));
  // Timed from before the gap is sent: the first FETCH can reach the test
  // late, the retry never comes before its 1 s timer.
  auto gap_sent = Clock::now();
  p->send(record(*p, 2));
  auto is_fetch = is<dafka::Fetch>([&](const dafka::Fetch& f) { return f.topic == p->address() && f.sequence == 1; });
  BOOST_REQUIRE(p->wait_for(is_fetch));
  BOOST_REQUIRE(p->wait_for(is_fetch, 5s));
  BOOST_CHECK(Clock::now() - gap_sent >= 900ms);  // on the retry timer, not a flood
}

// A producer that never answers the FETCH for offset 1: after the retries
// the store skips it (head 3 ACKed, a log line says so) instead of
// refusing everything more than the look-ahead past offset 0 for ever.
BOOST_AUTO_TEST_CASE(a_gap_nobody_fills_is_skipped_after_its_fetch_retries) {
  Env env({"--dafka-fetch-retry-ms", "100", "--dafka-fetch-retries", "3"});
  auto p = env.producer();
  BOOST_REQUIRE(produce_until_acked(*p, {0}, 0));
  p->send(record(*p, 2));
  p->send(record(*p, 3));
  auto ack = p->wait_for(is<dafka::Ack>([](const dafka::Ack& a) { return a.sequence == 3; }), 15s);
  BOOST_REQUIRE_MESSAGE(ack, env.store.zstored.log());
  BOOST_CHECK(env.store.zstored.log().find("offsets 1..1 still missing after 3 FETCHes: skipped, head now 3") !=
              std::string::npos);
  // The partition goes on: the next record is ACKed at once.
  BOOST_CHECK(produce_until_acked(*p, {4}, 4));
  auto c = env.consumer();
  BOOST_CHECK(wait_head(*c, p->address(), 4));
}

BOOST_AUTO_TEST_CASE(duplicates_are_acked_again) {
  Env env;
  auto p = env.producer();
  BOOST_REQUIRE(produce_until_acked(*p, {0, 1, 2}, 2));
  p->send(record(*p, 1));
  auto ack = p->wait_for(is<dafka::Ack>([](const dafka::Ack&) { return true; }));
  BOOST_REQUIRE(ack);
  BOOST_CHECK_EQUAL(std::get<dafka::Ack>(*ack).sequence, 2u);
}

BOOST_AUTO_TEST_CASE(a_huge_fetch_to_a_slow_reader_does_not_stall_the_store) {
  Env env;
  auto p = env.producer();
  constexpr std::uint64_t kRecords = 20000;
  const std::string big(1000, 'x');
  BOOST_REQUIRE(p->wait_for(is<dafka::Ack>([](const dafka::Ack&) { return true; }), 15s, [&] {
    p->send(dafka::Record{kTopic, p->address(), kTopic, 0, big});
  }));
  for (std::uint64_t i = 1; i < kRecords; ++i) p->send(dafka::Record{kTopic, p->address(), kTopic, i, big});
  BOOST_REQUIRE(p->wait_for(is<dafka::Ack>([&](const dafka::Ack& a) { return a.sequence == kRecords - 1; }), 30s));
  auto c = env.consumer();
  BOOST_REQUIRE(wait_head(*c, p->address(), kRecords - 1));
  // A second producer, known to the store before the FETCH: what is timed
  // below is its next record, not its discovery.
  auto q = env.producer();
  BOOST_REQUIRE(produce_until_acked(*q, {0}, 0));
  c->send(dafka::Fetch{p->address(), c->address(), kTopic, 0, 0xffffffffu});  // and do not read yet
  auto start = Clock::now();
  BOOST_REQUIRE(produce_until_acked(*q, {1}, 1));
  BOOST_CHECK(Clock::now() - start < 5s);
  auto got = collect(*c, kRecords);
  BOOST_REQUIRE_EQUAL(got.size(), kRecords);
  for (std::uint64_t i = 0; i < kRecords; ++i) BOOST_REQUIRE_EQUAL(got[i].sequence, i);
}

BOOST_AUTO_TEST_CASE(silent_peers_are_dropped_and_our_own_beacon_is_ignored) {
  Env env;
  auto p = env.producer();
  BOOST_REQUIRE(produce_until_acked(*p, {0}, 0));  // discovered and connected
  BOOST_CHECK(env.store.zstored.log().find("Dafka peer " + p->address() + " at") != std::string::npos);
  // p stops beaconing (nobody calls tick() any more): dropped after 3 s.
  BOOST_CHECK(zstore::testing::wait_until(
      [&] {
        return env.store.zstored.log().find(p->address() + " at tcp://127.0.0.1") != std::string::npos &&
               env.store.zstored.log().find("timed out") != std::string::npos;
      },
      10s));
  BOOST_CHECK(env.store.zstored.log().find("Dafka peer " + env.store.address) == std::string::npos);
}

namespace {

// The scheduling policy of zstored's ZeroMQ I/O thread (named "ZMQbg/IO/0",
// with --shared-core "N/ZMQbg/IO/0", server/reactor/io_batching.h); -1 when it is
// not found.
int io_thread_policy(pid_t pid) {
  std::string dir = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(dir)) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    if (std::getline(comm, name) && name.find("ZMQbg/IO/") != std::string::npos) {
      return sched_getscheduler(static_cast<pid_t>(std::stol(task.path().filename())));
    }
  }
  return -1;
}

}  // namespace

// Stores 20,000 records and has a consumer FETCH them all, reading nothing
// at first, so the answer stays open on a full pipe; returns the I/O
// thread's scheduling policy seen while the answer was open (SCHED_BATCH
// if it was seen at all within the wait) and checks it is SCHED_OTHER
// again at the end.
static int io_policy_while_fetches_are_answered(Env& env) {
  pid_t pid = env.store.zstored.process()->pid();
  // The I/O thread names itself once it runs, which may be after zstored
  // answers on its ports (a slow sanitizer build): wait for it.
  BOOST_REQUIRE(zstore::testing::wait_until([&] { return io_thread_policy(pid) != -1; }));
  BOOST_REQUIRE_EQUAL(io_thread_policy(pid), SCHED_OTHER);
  auto p = env.producer();
  constexpr std::uint64_t kRecords = 20000;  // 20 MB: more than the pipes and socket buffers hold
  const std::string content(1000, 'c');
  BOOST_REQUIRE(p->wait_for(is<dafka::Ack>([](const dafka::Ack&) { return true; }), 15s, [&] {
    p->send(dafka::Record{kTopic, p->address(), kTopic, 0, content});
  }));
  for (std::uint64_t i = 1; i < kRecords; ++i) p->send(dafka::Record{kTopic, p->address(), kTopic, i, content});
  BOOST_REQUIRE(produce_until_acked(*p, {kRecords - 1}, kRecords - 1));
  auto c = env.consumer();
  BOOST_REQUIRE(wait_head(*c, p->address(), kRecords - 1));
  c->send(dafka::Fetch{p->address(), c->address(), kTopic, 0, static_cast<std::uint32_t>(kRecords)});
  bool batched = zstore::testing::wait_until([&] { return io_thread_policy(pid) == SCHED_BATCH; }, 5s);
  auto got = collect(*c, kRecords, 100ms);
  BOOST_CHECK_EQUAL(got.size(), kRecords);
  BOOST_CHECK(zstore::testing::wait_until([&] { return io_thread_policy(pid) == SCHED_OTHER; }));
  return batched ? SCHED_BATCH : SCHED_OTHER;
}

// With --shared-core the store's ZeroMQ I/O thread is SCHED_BATCH while it
// answers FETCHes (it sends in bulk instead of preempting the reactor for
// each record), and back to SCHED_OTHER once they are answered.
BOOST_AUTO_TEST_CASE(io_thread_batches_only_while_fetches_are_answered) {
  Env env({"--shared-core"});
  BOOST_CHECK_EQUAL(io_policy_while_fetches_are_answered(env), SCHED_BATCH);
}

// By default the kernel schedules it as any thread.
BOOST_AUTO_TEST_CASE(io_thread_keeps_its_policy_by_default) {
  Env env;
  BOOST_CHECK_EQUAL(io_policy_while_fetches_are_answered(env), SCHED_OTHER);
}

// A new peer gets our beacon at once, as reference nodes answer one
// (dafka_beacon.c), not at our next periodic beacon: a reference producer
// learns our publisher that way, before it waits for our ACK. zstored
// beacons every 10 s here; a listener on the tower hears its answer to a
// node that begins beaconing well within that.
BOOST_AUTO_TEST_CASE(a_new_peer_gets_our_beacon_at_once) {
  Env env({"--beacon-interval-ms", "10000", "--beacon-timeout-ms", "30000"});
  zmq::socket_t listener(env.ctx, zmq::socket_type::sub);
  listener.set(zmq::sockopt::linger, 0);
  listener.set(zmq::sockopt::subscribe, "");
  listener.connect("tcp://127.0.0.1:" + std::to_string(env.store.tower() + 1));
  auto heard = [&](const std::function<bool(zstore::protocol::FrameViews)>& pred, std::chrono::milliseconds within,
                   const std::function<void()>& meanwhile = {}) {
    auto deadline = Clock::now() + within;
    while (Clock::now() < deadline) {
      if (meanwhile) meanwhile();
      zmq::pollitem_t item{listener.handle(), 0, ZMQ_POLLIN, 0};
      if (zmq::poll(&item, 1, 20ms) <= 0) continue;
      std::vector<zmq::message_t> parts;
      if (!zmq::recv_multipart(listener, std::back_inserter(parts))) continue;
      std::vector<std::string_view> views;
      for (auto& part : parts) views.emplace_back(static_cast<const char*>(part.data()), part.size());
      if (pred(views)) return true;
    }
    return false;
  };
  // The tower's welcome: our subscription is in place.
  BOOST_REQUIRE(heard([](zstore::protocol::FrameViews f) { return zstore::protocol::beacon::is_welcome(f); }, 10s));
  auto is_store_beacon = [&](zstore::protocol::FrameViews f) {
    auto b = zstore::protocol::beacon::decode_tower_beacon(f);
    return b && b->uuid == env.store.address;
  };
  FakeNode node(env.ctx, env.store.tower(), {'K'});
  auto started = Clock::now();
  BOOST_REQUIRE_MESSAGE(heard(is_store_beacon, 3s, [&] { node.tick(); }), env.store.zstored.log());
  BOOST_TEST_MESSAGE("store beacon heard "
                     << std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count()
                     << " ms after the new node's first beacon");
}

// A producer whose ACK went out before it was connected to us (it learnt
// our publisher late) gets an ACK of our head for its next HEAD at or
// below it, within one beacon interval, rather than waiting for ever.
BOOST_AUTO_TEST_CASE(a_producer_that_connects_after_its_records_were_stored_is_acked_on_its_head) {
  Env env({"--beacon-interval-ms", "1000"});
  // Beacons (so the store connects to its publisher) but hears nothing yet.
  FakeNode p(env.ctx, env.store.tower(), {'K', 'F'});
  auto c = env.consumer();
  BOOST_REQUIRE_MESSAGE(wait_head(*c, p.address(), 2,
                                  [&] {
                                    p.tick();
                                    for (std::uint64_t s = 0; s <= 2; ++s) p.send(record(p, s));
                                  }),
                        env.store.zstored.log());
  p.connect(env.store.endpoint());
  auto connected = Clock::now();
  auto ack = p.wait_for(is<dafka::Ack>([&](const dafka::Ack& a) { return a.topic == p.address(); }), 1s, [&] {
    p.send(dafka::Head{kTopic, p.address(), kTopic, 2});
  });
  BOOST_REQUIRE_MESSAGE(ack, env.store.zstored.log());
  BOOST_CHECK_EQUAL(std::get<dafka::Ack>(*ack).subject, kTopic);
  BOOST_CHECK_EQUAL(std::get<dafka::Ack>(*ack).sequence, 2u);
  BOOST_TEST_MESSAGE("ACKed " << std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - connected).count()
                              << " ms after connecting");
}

// A FETCH answered short of our head (here: a consumer's window of 10 of
// 30 records) is followed, after its last DIRECT-RECORD, by a DIRECT-HEAD of
// our head, so a consumer with a bounded FETCH window asks for the rest; an
// answer that reaches the head is not.
BOOST_AUTO_TEST_CASE(a_fetch_answered_short_of_the_head_is_followed_by_a_direct_head) {
  Env env;
  auto p = env.producer();
  BOOST_REQUIRE(produce_until_acked(*p, range(30), 29));
  auto c = env.consumer();
  BOOST_REQUIRE(wait_head(*c, p->address(), 29));
  // What reaches c for p's partition, in order, until a DIRECT-HEAD comes
  // after some DIRECT-RECORD (or the time is up).
  auto answer = [&](const dafka::Fetch& fetch, std::chrono::milliseconds within) {
    std::vector<dafka::Message> got;
    c->send(fetch);
    c->wait_for(
        [&](const dafka::Message& m) {
          auto* d = std::get_if<dafka::DirectRecord>(&m);
          auto* h = std::get_if<dafka::DirectHead>(&m);
          if ((d && d->topic == c->address()) || (h && h->topic == c->address() && !got.empty())) got.push_back(m);
          return h && !got.empty() && std::holds_alternative<dafka::DirectHead>(got.back());
        },
        within);
    return got;
  };
  auto got = answer(dafka::Fetch{p->address(), c->address(), kTopic, 0, 10}, 10s);
  BOOST_REQUIRE_EQUAL(got.size(), 11u);
  for (std::uint64_t i = 0; i < 10; ++i) {
    auto* d = std::get_if<dafka::DirectRecord>(&got[i]);
    BOOST_REQUIRE(d);
    BOOST_CHECK_EQUAL(d->sequence, i);
  }
  auto& head = std::get<dafka::DirectHead>(got.back());
  BOOST_CHECK_EQUAL(head.partition, p->address());
  BOOST_CHECK_EQUAL(head.subject, kTopic);
  BOOST_CHECK_EQUAL(head.sequence, 29u);
  got = answer(dafka::Fetch{p->address(), c->address(), kTopic, 20, 10}, 1s);
  BOOST_CHECK_EQUAL(got.size(), 10u);  // the records, and no DIRECT-HEAD after them
}

// A gap given up is one log line per partition: for many partitions at
// once the lines are rate-limited (server/reactor/log.h: 10 a second, the rest
// counted as suppressed), while /metrics counts every gap.
BOOST_AUTO_TEST_CASE(gaps_given_up_on_many_partitions_log_a_bounded_number_of_lines) {
  const std::uint16_t http = zstore::testing::free_port();
  Env env({"--dafka-fetch-retry-ms", "100", "--dafka-fetch-retries", "1", "--http-port", std::to_string(http)});
  auto skipped = [&] {
    return zstore::testing::metric(zstore::testing::scrape_metrics(http), "zstore_dafka_gaps_skipped_total");
  };
  auto p = env.producer();
  BOOST_REQUIRE(produce_until_acked(*p, {0}, 0));  // the store is connected to p's publisher
  constexpr int kPartitions = 200;
  // Offset 1 of partitions nobody answers FETCHes for: each gap (offset 0)
  // is given up after its retry.
  for (int i = 0; i < kPartitions; ++i) {
    p->send(dafka::Record{kTopic, zstore::testing::random_dafka_address(), kTopic, 1, "x"});
  }
  BOOST_REQUIRE_MESSAGE(zstore::testing::wait_until([&] { return skipped() >= kPartitions; }, 20s),
                        "gaps skipped: " << skipped());
  std::string log = env.store.zstored.log();
  std::size_t lines = 0;
  for (auto at = log.find("still missing after"); at != std::string::npos;
       at = log.find("still missing after", at + 1)) {
    ++lines;
  }
  BOOST_TEST_MESSAGE(lines << " line(s) for " << kPartitions << " gaps skipped");
  BOOST_CHECK_GE(lines, 1u);
  BOOST_CHECK_LE(lines, 50u);
}

namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// How many samples of a family a scrape holds.
std::size_t samples_of(const std::map<std::string, double>& m, const std::string& family) {
  std::size_t n = 0;
  for (const auto& [sample, value] : m) n += sample.starts_with(family + "{") ? 1 : 0;
  return n;
}

}  // namespace

// Past --dafka-max-partitions-per-topic and --dafka-max-topics a record of
// a new partition is refused: never stored, counted by limit in /metrics,
// logged once per --dafka-limits-interval-ms; a record whose topic name is
// not printable UTF-8 is dropped as invalid and never becomes a label.
// Partitions held go on as before.
BOOST_AUTO_TEST_CASE(records_past_the_partition_and_topic_limits_are_refused_counted_and_logged_once) {
  const std::uint16_t http = zstore::testing::free_port();
  Env env({"--dafka-max-partitions-per-topic", "3", "--dafka-max-topics", "2", "--dafka-limits-interval-ms", "60000",
           "--http-port", std::to_string(http)});
  auto scrape = [&] { return zstore::testing::scrape_metrics(http); };
  auto refused = [&](const std::string& limit) {
    return zstore::testing::metric(scrape(), "zstore_dafka_refused_by_limit_total{limit=\"" + limit + "\"}");
  };
  auto p = env.producer();
  BOOST_REQUIRE(produce_until_acked(*p, {0}, 0));  // partition 1 of 3 of kTopic
  std::vector<std::string> partitions;
  for (int i = 0; i < 4; ++i) {
    partitions.push_back(zstore::testing::random_dafka_address());
    p->send(dafka::Record{kTopic, partitions.back(), kTopic, 0, "x"});
  }
  p->send(dafka::Record{"second", p->address(), "second", 0, "x"});  // topic 2 of 2
  p->send(dafka::Record{"third", p->address(), "third", 0, "x"});
  p->send(dafka::Record{"bad\xff", p->address(), "bad\xff", 0, "x"});
  BOOST_REQUIRE_MESSAGE(zstore::testing::wait_until([&] {
                          return refused("partitions_per_topic") >= 2 && refused("topics") >= 1 &&
                                 zstore::testing::metric(scrape(), "zstore_dafka_invalid_total") >= 1;
                        }),
                        env.store.zstored.log());
  auto m = scrape();
  BOOST_CHECK_EQUAL(zstore::testing::metric(m, "zstore_dafka_refused_by_limit_total{limit=\"partitions_per_topic\"}"),
                    2);
  BOOST_CHECK_EQUAL(zstore::testing::metric(m, "zstore_dafka_refused_by_limit_total{limit=\"topics\"}"), 1);
  BOOST_CHECK_EQUAL(zstore::testing::metric(m, "zstore_dafka_partitions"), 4);  // 3 of kTopic, 1 of "second"
  BOOST_CHECK_EQUAL(zstore::testing::metric(m, "zstore_dafka_topics"), 2);
  BOOST_CHECK_EQUAL(zstore::testing::metric(m, "zstore_dafka_limit{limit=\"partitions_per_topic\"}"), 3);
  BOOST_CHECK_EQUAL(zstore::testing::metric(m, "zstore_dafka_limit{limit=\"topics\"}"), 2);
  BOOST_CHECK_EQUAL(m.count("zstore_dafka_topic_records{topic=\"third\"}"), 0u);
  std::string body = zstore::testing::http_request(http, "GET", "/metrics").body;
  BOOST_CHECK(body.find("topic=\"bad") == std::string::npos);
  BOOST_CHECK(body.find("\xff") == std::string::npos);
  // Exactly 3 partitions of kTopic are stored: the store's own heads say so.
  auto c = env.consumer();
  std::map<std::string, std::uint64_t> heads;
  c->wait_for(is<dafka::DirectHead>([&](const dafka::DirectHead& h) {
                if (h.topic == c->address() && h.subject == kTopic) heads[h.partition] = h.sequence;
                return false;
              }),
              2s, [&] {
                c->send(dafka::GetHeads{kTopic, c->address()});
              });
  BOOST_CHECK_EQUAL(heads.size(), 3u);
  BOOST_CHECK_EQUAL(count_of(env.store.zstored.log(), "Dafka: refused partition"), 1u);  // once per interval
  BOOST_CHECK(produce_until_acked(*p, {1}, 1));  // a partition held is not limited
}

// --dafka-max-new-partitions bounds the partitions taken per interval, from
// all producers together: the rest are refused until the next interval.
BOOST_AUTO_TEST_CASE(new_partitions_past_the_rate_limit_are_refused) {
  const std::uint16_t http = zstore::testing::free_port();
  Env env(
      {"--dafka-max-new-partitions", "3", "--dafka-limits-interval-ms", "60000", "--http-port", std::to_string(http)});
  auto p = env.producer();
  BOOST_REQUIRE(produce_until_acked(*p, {0}, 0));  // 1 of 3
  for (int i = 0; i < 5; ++i) p->send(dafka::Record{kTopic, zstore::testing::random_dafka_address(), kTopic, 0, "x"});
  auto refused = [&] {
    return zstore::testing::metric(zstore::testing::scrape_metrics(http),
                                   "zstore_dafka_refused_by_limit_total{limit=\"new_partitions\"}");
  };
  auto partitions = [&] {
    return zstore::testing::metric(zstore::testing::scrape_metrics(http), "zstore_dafka_partitions");
  };
  // The refusals are counted as the records arrive, the two taken partitions
  // once their batch is written: wait for both.
  BOOST_REQUIRE_MESSAGE(zstore::testing::wait_until([&] { return refused() >= 3 && partitions() >= 3; }),
                        env.store.zstored.log());
  BOOST_CHECK_EQUAL(refused(), 3);
  BOOST_CHECK_EQUAL(partitions(), 3);
}

// /metrics keeps --dafka-metrics-topics per-topic series (the topics
// holding the most bytes) and sums the rest under topic="", so a scrape
// stays small with any number of topics.
BOOST_AUTO_TEST_CASE(metrics_keep_a_bounded_number_of_topic_series) {
  const std::uint16_t http = zstore::testing::free_port();
  Env env({"--dafka-metrics-topics", "5", "--http-port", std::to_string(http)});
  auto p = env.producer();
  BOOST_REQUIRE(produce_until_acked(*p, {0}, 0));
  constexpr int kTopics = 20;  // besides kTopic; topic i holds i + 1 bytes
  for (int i = 0; i < kTopics; ++i) {
    std::string topic = "topic-" + std::to_string(i);
    p->send(dafka::Record{topic, p->address(), topic, 0, std::string(static_cast<std::size_t>(i) + 1, 'b')});
  }
  auto m = zstore::testing::scrape_metrics(http);
  BOOST_REQUIRE_MESSAGE(zstore::testing::wait_until([&] {
                          m = zstore::testing::scrape_metrics(http);
                          return zstore::testing::metric(m, "zstore_dafka_topics") >= kTopics + 1;
                        }),
                        env.store.zstored.log());
  BOOST_CHECK_EQUAL(samples_of(m, "zstore_dafka_topic_records"), 6u);
  BOOST_CHECK_EQUAL(samples_of(m, "zstore_dafka_topic_bytes"), 6u);
  BOOST_CHECK_EQUAL(samples_of(m, "zstore_dafka_topic_partitions"), 6u);
  for (int i = kTopics - 5; i < kTopics; ++i) {  // the 5 largest
    BOOST_CHECK_EQUAL(zstore::testing::metric(m, "zstore_dafka_topic_bytes{topic=\"topic-" + std::to_string(i) + "\"}"),
                      i + 1);
  }
  double rest = 0;  // kTopic's record and topics 0..14
  std::string content0 = record(*p, 0).content;
  rest += static_cast<double>(content0.size());
  for (int i = 0; i < kTopics - 5; ++i) rest += i + 1;
  BOOST_CHECK_EQUAL(zstore::testing::metric(m, "zstore_dafka_topic_bytes{topic=\"\"}"), rest);
  BOOST_CHECK_EQUAL(zstore::testing::metric(m, "zstore_dafka_topic_partitions{topic=\"\"}"), kTopics - 5 + 1);
  BOOST_CHECK_EQUAL(zstore::testing::metric(m, "zstore_dafka_topics_unlisted"), kTopics - 5 + 1);
}

// A new partition admitted by its HEAD (and so FETCHed) is not counted
// again when the answer arrives: with room for one new partition, the
// DIRECT-RECORDs that answer the FETCH are stored.
BOOST_AUTO_TEST_CASE(the_answer_to_a_fetch_of_a_partition_admitted_by_its_head_is_stored) {
  const std::uint16_t http = zstore::testing::free_port();
  Env env(
      {"--dafka-max-new-partitions", "2", "--dafka-limits-interval-ms", "60000", "--http-port", std::to_string(http)});
  auto p = env.producer();
  BOOST_REQUIRE(produce_until_acked(*p, {0}, 0));  // 1 of 2
  // q's records went elsewhere; it announces its head.
  FakeNode q(env.ctx, env.store.tower(), {'K', 'F'});
  q.connect(env.store.endpoint());
  auto m = q.wait_for(is<dafka::Fetch>([&](const dafka::Fetch& f) { return f.topic == q.address(); }), 15s, [&] {
    q.send(dafka::Head{kTopic, q.address(), kTopic, 4});
  });  // 2 of 2
  BOOST_REQUIRE_MESSAGE(m, env.store.zstored.log());
  auto fetch = std::get<dafka::Fetch>(*m);
  BOOST_REQUIRE_EQUAL(fetch.sequence, 0u);
  for (std::uint64_t i = 0; i < 5; ++i) {
    q.send(dafka::DirectRecord{fetch.address, q.address(), kTopic, i, "content-" + std::to_string(i)});
  }
  BOOST_CHECK_MESSAGE(q.wait_for(is<dafka::Ack>([](const dafka::Ack& a) { return a.sequence == 4; })),
                      env.store.zstored.log());
  BOOST_CHECK_EQUAL(zstore::testing::metric(zstore::testing::scrape_metrics(http),
                                            "zstore_dafka_refused_by_limit_total{limit=\"new_partitions\"}"),
                    0);
}

// Hostile offsets (issue 53's probes): records at offset 1e15 and HEADs at
// 2^63 of one partition are refused and counted, never stored, and cost the
// log a bounded number of lines (each was a line of its own before).
BOOST_AUTO_TEST_CASE(records_and_heads_at_absurd_offsets_are_refused_counted_and_log_little) {
  const std::uint16_t http = zstore::testing::free_port();
  Env env({"--dafka-fetch-retry-ms", "100", "--dafka-fetch-retries", "1", "--http-port", std::to_string(http)});
  auto p = env.producer();
  BOOST_REQUIRE(produce_until_acked(*p, {0}, 0));
  const std::size_t log_before = env.store.zstored.log().size();
  constexpr std::uint64_t kProbes = 20000;
  const std::string far = zstore::testing::random_dafka_address();
  for (std::uint64_t i = 0; i < kProbes; ++i) {
    p->send(dafka::Record{kTopic, far, kTopic, 1000000000000000ull + i, "x"});
    p->send(dafka::Head{kTopic, p->address(), kTopic, (std::uint64_t{1} << 63) - i});
  }
  // Everything before it on p's connection has been handled once this is ACKed.
  BOOST_REQUIRE(produce_until_acked(*p, {0, 1}, 1));
  auto m = zstore::testing::scrape_metrics(http);
  BOOST_CHECK_EQUAL(zstore::testing::metric(m, "zstore_dafka_records_too_far_total"), kProbes);
  BOOST_CHECK_EQUAL(zstore::testing::metric(m, "zstore_dafka_records_stored_total"), 2);
  // The HEADs' gap is FETCHed, given up and forgotten; its lines are limited.
  BOOST_REQUIRE_MESSAGE(zstore::testing::wait_until([&] {
                          return env.store.zstored.log().find("waiting for its next HEAD") != std::string::npos;
                        }),
                        env.store.zstored.log().substr(log_before, 4000));
  std::string log = env.store.zstored.log().substr(log_before);
  std::size_t lines = static_cast<std::size_t>(std::count(log.begin(), log.end(), '\n'));
  BOOST_TEST_MESSAGE(lines << " log line(s), " << log.size() << " bytes for " << 2 * kProbes << " hostile messages");
  BOOST_CHECK_LE(lines, 100u);
  BOOST_CHECK_LT(log.size(), 64u << 10);
  BOOST_CHECK(produce_until_acked(*p, {2}, 2));  // the store still serves
}

namespace {

// The resident size of a process, in KiB (0 if it cannot be read).
std::uint64_t rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmRSS:")) return std::stoull(line.substr(6));
  }
  return 0;
}

}  // namespace

// Issue 53's hostile producers at the default limits: records for 30,000
// new topics with 200-byte names and 100,000 new partitions of one topic,
// sent as fast as a PUB goes. What the limits refuse is counted, never
// stored; memory, /metrics and the log stay small (before the limits:
// +205 MiB and a 35.9 MB scrape for 50,000 topics).
BOOST_AUTO_TEST_CASE(a_flood_of_new_topics_and_partitions_keeps_memory_metrics_and_log_bounded) {
  const std::uint16_t http = zstore::testing::free_port();
  Env env({"--http-port", std::to_string(http)});
  auto p = env.producer();
  BOOST_REQUIRE(produce_until_acked(*p, {0}, 0));
  const std::uint64_t rss_before = rss_kib(env.store.zstored.process()->pid());
  const std::size_t log_before = env.store.zstored.log().size();
  constexpr int kTopics = 30000, kPartitions = 100000;
  for (int i = 0; i < kTopics; ++i) {
    std::string topic = std::to_string(i) + std::string(200 - std::to_string(i).size(), 't');
    p->send(dafka::Record{topic, p->address(), topic, 0, "x"});
  }
  for (int i = 0; i < kPartitions; ++i) {
    p->send(dafka::Record{kTopic, zstore::testing::random_dafka_address(), kTopic, 0, "x"});
  }
  BOOST_REQUIRE(produce_until_acked(*p, {0, 1}, 1));  // everything before it was handled
  auto m = zstore::testing::scrape_metrics(http);
  double refused = 0;
  for (const char* limit : {"topics", "partitions", "partitions_per_topic", "new_partitions"}) {
    refused += zstore::testing::metric(m, std::string("zstore_dafka_refused_by_limit_total{limit=\"") + limit + "\"}");
  }
  const double stored = zstore::testing::metric(m, "zstore_dafka_records_stored_total");
  BOOST_CHECK_EQUAL(stored + refused, kTopics + kPartitions + 2);            // each either stored or refused
  BOOST_CHECK_LE(zstore::testing::metric(m, "zstore_dafka_topics"), 10000);  // --dafka-max-topics
  const std::size_t scrape = zstore::testing::http_request(http, "GET", "/metrics").body.size();
  const std::uint64_t rss_after = rss_kib(env.store.zstored.process()->pid());
  const std::size_t log = env.store.zstored.log().size() - log_before;
  BOOST_TEST_MESSAGE("stored " << stored << ", refused " << refused << "; RSS " << rss_before / 1024 << " -> "
                               << rss_after / 1024 << " MiB; /metrics " << scrape << " B; log +" << log << " B");
  BOOST_CHECK_LT(scrape, 1u << 20);
  BOOST_CHECK_LT(log, 1u << 20);
#if !defined(__SANITIZE_ADDRESS__)
  // (ASan's allocator keeps freed memory in quarantine: RSS says nothing there.)
  BOOST_CHECK_LT(rss_after, rss_before + (90u << 10));  // the partitions' budget (docs/dafka.md#limits)
#endif
  BOOST_CHECK(produce_until_acked(*p, {2}, 2));
}
