// Dafka consumer against a scripted fake tower and fake store (which here
// also plays the producers: it publishes RECORDs and HEADs for made-up
// partitions).
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <map>
#include <string>

#include "client/dafka_consumer.h"
#include "client/dafka_producer.h"
#include "protocol/dafka_codec.h"
#include "protocol/dafka_messages.h"
#include "tests/client/dafka_fake_peers.h"
#include "tests/support/test_support.h"

namespace dafka = zstore::client::dafka;
namespace wire = zstore::protocol::dafka;
using zstore::testing::FakeStore;
using zstore::testing::FakeTower;
using zstore::testing::wait_until;
using namespace std::chrono_literals;
using Reset = dafka::ConsumerOptions::Reset;

namespace {

const std::string kPartition = "0123456789ABCDEF0123456789ABCDEF";

dafka::ConsumerOptions options_for(const FakeTower& tower, Reset reset) {
  dafka::ConsumerOptions o;
  o.node.towers = {tower.endpoint()};
  o.node.beacon_interval = 100ms;
  o.reset = reset;
  o.fetch_retry = 200ms;
  o.get_heads_retry = 200ms;
  return o;
}

// A consumer of "hello" and a store that see each other.
struct Connected {
  FakeTower tower;
  FakeStore store;
  dafka::Consumer consumer;
  Connected(Reset reset, bool auto_store = false)
      : store(tower.endpoint(), auto_store), consumer(options_for(tower, reset)) {
    consumer.subscribe({"hello"});
    store.connect(consumer.endpoint());
    BOOST_REQUIRE(consumer.wait_connected(10s));
    // The consumer's SUB has the topic subscription in place at the store.
    BOOST_REQUIRE(wait_until([&] { return store.has_subscription("Mhello"); }));
  }
  void record(std::uint64_t seq, const std::string& content, const std::string& topic = "hello") {
    store.send(wire::Record{topic, kPartition, topic, seq, content});
  }
  void direct(std::uint64_t seq, const std::string& content) {
    store.send(wire::DirectRecord{consumer.address(), kPartition, "hello", seq, content});
  }
  // The next record, or fails the test.
  dafka::Record next() {
    auto r = consumer.poll(10s);
    BOOST_REQUIRE(r.has_value());
    return *r;
  }
  std::vector<wire::Fetch> fetches() { return store.received_of<wire::Fetch>(); }
};

}  // namespace

BOOST_AUTO_TEST_CASE(store_hello_is_answered_with_consumer_hello_and_subjects) {
  Connected c(Reset::kLatest);
  BOOST_TEST(wait_until([&] {
    for (auto& h : c.store.received_of<wire::ConsumerHello>())
      if (h.topic == c.store.address() && h.address == c.consumer.address() &&
          h.subjects == std::vector<std::string>{"hello"})
        return true;
    return false;
  }));
}

BOOST_AUTO_TEST_CASE(delivers_records_in_order_with_topic_partition_offset) {
  Connected c(Reset::kLatest);
  for (int i = 0; i < 3; ++i) c.record(i, "r" + std::to_string(i));
  for (std::uint64_t i = 0; i < 3; ++i) {
    auto r = c.next();
    BOOST_TEST(r.topic == "hello");
    BOOST_TEST(r.partition == kPartition);
    BOOST_TEST(r.offset == i);
    BOOST_TEST(r.content == "r" + std::to_string(i));
  }
  BOOST_TEST(!c.consumer.poll(0ms).has_value());
}

BOOST_AUTO_TEST_CASE(latest_starts_at_the_first_offset_seen) {
  Connected c(Reset::kLatest);
  c.record(7, "seven");
  c.record(8, "eight");
  BOOST_TEST(c.next().offset == 7u);
  BOOST_TEST(c.next().offset == 8u);
  BOOST_TEST(c.fetches().empty());
}

BOOST_AUTO_TEST_CASE(prefix_topics_are_filtered) {
  Connected c(Reset::kLatest);
  c.record(0, "other", "hello2");
  c.record(0, "mine");
  c.record(1, "other", "hello2");
  c.record(1, "mine too");
  BOOST_TEST(c.next().content == "mine");
  BOOST_TEST(c.next().content == "mine too");
  BOOST_TEST(!c.consumer.poll(100ms).has_value());
}

BOOST_AUTO_TEST_CASE(a_gap_is_fetched_again_until_filled_then_delivered_in_order_once) {
  Connected c(Reset::kLatest);
  c.record(0, "r0");
  BOOST_TEST(c.next().offset == 0u);
  c.record(3, "r3");
  c.record(4, "r4");
  // The first FETCH asks for exactly the missing 1..2 and goes unanswered.
  BOOST_TEST(wait_until([&] { return c.fetches().size() >= 1; }));
  auto first = c.fetches()[0];
  BOOST_TEST(first.topic == kPartition);
  BOOST_TEST(first.address == c.consumer.address());
  BOOST_TEST(first.subject == "hello");
  BOOST_TEST(first.sequence == 1u);
  BOOST_TEST(first.count == 2u);
  BOOST_TEST(!c.consumer.poll(0ms).has_value());
  // Retried by the timer.
  BOOST_TEST(wait_until([&] { return c.fetches().size() >= 2; }));
  BOOST_TEST(c.fetches()[1].sequence == 1u);
  c.direct(1, "r1");
  c.direct(2, "r2");
  c.direct(2, "r2 again");  // duplicate answers (several stores) are ignored
  c.record(3, "r3 again");
  c.record(5, "r5");
  for (std::uint64_t i = 1; i <= 5; ++i) {
    auto r = c.next();
    BOOST_TEST(r.offset == i);
    BOOST_TEST(r.content == "r" + std::to_string(i));
  }
  BOOST_TEST(!c.consumer.poll(100ms).has_value());
}

BOOST_AUTO_TEST_CASE(head_beyond_the_last_delivered_fetches) {
  Connected c(Reset::kLatest);
  c.record(0, "r0");
  BOOST_TEST(c.next().offset == 0u);
  c.store.send(wire::Head{"hello", kPartition, "hello", 2});
  BOOST_TEST(wait_until([&] { return !c.fetches().empty(); }));
  BOOST_TEST(c.fetches()[0].sequence == 1u);
  BOOST_TEST(c.fetches()[0].count == 2u);
  c.direct(1, "r1");
  c.direct(2, "r2");
  BOOST_TEST(c.next().offset == 1u);
  BOOST_TEST(c.next().offset == 2u);
}

BOOST_AUTO_TEST_CASE(earliest_sends_get_heads_and_fetches_from_zero) {
  Connected c(Reset::kEarliest);
  BOOST_TEST(wait_until([&] {
    for (auto& g : c.store.received_of<wire::GetHeads>())
      if (g.topic == "hello" && g.address == c.consumer.address()) return true;
    return false;
  }));
  c.store.send(wire::DirectHead{c.consumer.address(), kPartition, "hello", 2});
  BOOST_TEST(wait_until([&] { return !c.fetches().empty(); }));
  BOOST_TEST(c.fetches()[0].sequence == 0u);
  BOOST_TEST(c.fetches()[0].count == 3u);
  for (int i = 0; i < 3; ++i) c.direct(i, "r" + std::to_string(i));
  for (std::uint64_t i = 0; i < 3; ++i) BOOST_TEST(c.next().offset == i);
}

BOOST_AUTO_TEST_CASE(earliest_record_beyond_zero_fetches_from_zero) {
  Connected c(Reset::kEarliest);
  c.record(2, "r2");
  BOOST_TEST(wait_until([&] { return !c.fetches().empty(); }));
  BOOST_TEST(c.fetches()[0].sequence == 0u);
  BOOST_TEST(c.fetches()[0].count == 2u);
  c.direct(0, "r0");
  c.direct(1, "r1");
  for (std::uint64_t i = 0; i < 3; ++i) BOOST_TEST(c.next().offset == i);
}

BOOST_AUTO_TEST_CASE(malformed_partitions_and_foreign_direct_records_are_ignored) {
  Connected c(Reset::kLatest);
  c.store.send(wire::Record{"hello", "not-an-address", "hello", 0, "bad"});
  c.store.send(wire::DirectRecord{std::string(32, 'A'), kPartition, "hello", 0, "not for us"});
  c.record(0, "good");
  BOOST_TEST(c.next().content == "good");
}

BOOST_AUTO_TEST_CASE(producer_to_consumer_through_a_store) {
  // End to end over the fakes: the producer publishes before the consumer
  // exists; an earliest consumer gets everything from the store.
  FakeTower tower;
  FakeStore store(tower.endpoint(), true);
  dafka::ProducerOptions po;
  po.node.towers = {tower.endpoint()};
  po.node.beacon_interval = 100ms;
  po.head_interval = 200ms;
  dafka::Producer producer(po);
  store.connect(producer.endpoint());
  for (int i = 0; i < 10; ++i) producer.publish("hello", "m" + std::to_string(i));
  BOOST_REQUIRE(producer.flush(10s));

  dafka::Consumer consumer(options_for(tower, Reset::kEarliest));
  consumer.subscribe({"hello"});
  store.connect(consumer.endpoint());
  for (int i = 0; i < 10; ++i) {
    auto r = consumer.poll(10s);
    BOOST_REQUIRE(r.has_value());
    BOOST_TEST(r->partition == producer.address());
    BOOST_TEST(r->offset == std::uint64_t(i));
    BOOST_TEST(r->content == "m" + std::to_string(i));
  }
  // Live records arrive directly from the producer (and the store's copies
  // are not delivered twice).
  producer.publish("hello", "live");
  auto r = consumer.poll(10s);
  BOOST_REQUIRE(r.has_value());
  BOOST_TEST(r->content == "live");
  BOOST_TEST(r->offset == 10u);
  BOOST_TEST(!consumer.poll(300ms).has_value());
}

BOOST_AUTO_TEST_CASE(records_beyond_the_buffer_bound_are_fetched_again) {
  FakeTower tower;
  FakeStore store(tower.endpoint(), false);
  auto o = options_for(tower, Reset::kLatest);
  o.max_buffered = 2;
  dafka::Consumer consumer(o);
  consumer.subscribe({"hello"});
  store.connect(consumer.endpoint());
  BOOST_REQUIRE(consumer.wait_connected(10s));
  BOOST_REQUIRE(wait_until([&] { return store.has_subscription("Mhello"); }));
  auto send = [&](std::uint64_t seq) {
    store.send(wire::Record{"hello", kPartition, "hello", seq, "r" + std::to_string(seq)});
  };
  send(0);
  BOOST_REQUIRE(consumer.poll(10s).has_value());
  for (std::uint64_t s = 2; s <= 6; ++s) send(s);  // 2 and 3 buffered, 4..6 dropped
  // Answer every FETCH with exactly what it asks for, until all is delivered.
  std::size_t answered = 0;
  std::uint64_t next = 1;
  auto deadline = std::chrono::steady_clock::now() + 15s;
  while (next <= 6 && std::chrono::steady_clock::now() < deadline) {
    auto fetches = store.received_of<wire::Fetch>();
    for (; answered < fetches.size(); ++answered)
      for (std::uint64_t s = fetches[answered].sequence; s < fetches[answered].sequence + fetches[answered].count; ++s)
        store.send(wire::DirectRecord{consumer.address(), kPartition, "hello", s, "r" + std::to_string(s)});
    if (auto r = consumer.poll(20ms)) {
      BOOST_TEST(r->offset == next);
      BOOST_TEST(r->content == "r" + std::to_string(next));
      ++next;
    }
  }
  BOOST_TEST(next == 7u);
  BOOST_TEST(!consumer.poll(200ms).has_value());
}

BOOST_AUTO_TEST_CASE(partitions_and_topics_are_ordered_independently) {
  Connected c(Reset::kEarliest);
  c.consumer.subscribe({"other"});
  BOOST_REQUIRE(wait_until([&] { return c.store.has_subscription("Mother"); }));
  const std::string p2 = "FEDCBA9876543210FEDCBA9876543210";
  auto send = [&](const std::string& topic, const std::string& part, std::uint64_t seq) {
    c.store.send(wire::Record{topic, part, topic, seq, topic + part.substr(0, 1) + std::to_string(seq)});
  };
  send("hello", kPartition, 0);
  send("hello", p2, 0);
  send("other", kPartition, 0);
  send("hello", p2, 1);
  send("hello", kPartition, 1);
  send("other", kPartition, 1);
  std::map<std::pair<std::string, std::string>, std::uint64_t> next;
  for (int i = 0; i < 6; ++i) {
    auto r = c.next();
    auto& n = next[{r.topic, r.partition}];
    BOOST_TEST(r.offset == n);
    BOOST_TEST(r.content == r.topic + r.partition.substr(0, 1) + std::to_string(r.offset));
    ++n;
  }
  BOOST_TEST(next.size() == 3u);
  BOOST_TEST(c.fetches().empty());
}
