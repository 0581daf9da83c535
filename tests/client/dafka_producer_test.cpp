// Dafka producer against a scripted fake tower and fake store.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>

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

namespace {

dafka::ProducerOptions options_for(const FakeTower& tower) {
  dafka::ProducerOptions o;
  o.node.towers = {tower.endpoint()};
  o.node.beacon_interval = 100ms;
  o.head_interval = 200ms;
  return o;
}

// A producer and a store that see each other.
struct Connected {
  FakeTower tower;
  FakeStore store;
  dafka::Producer producer;
  explicit Connected(bool auto_store) : store(tower.endpoint(), auto_store), producer(options_for(tower)) {
    store.connect(producer.endpoint());
    BOOST_REQUIRE(producer.wait_connected(10s));
    // And the other way: the producer's SUB hears the store's ACKs.
    BOOST_REQUIRE(wait_until([&] { return store.has_subscription("K" + producer.address()); }));
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(address_is_32_uppercase_hex_and_fresh_per_producer) {
  FakeTower tower;
  dafka::Producer a(options_for(tower)), b(options_for(tower));
  BOOST_TEST(wire::is_valid_address(a.address()));
  BOOST_TEST(a.address() != b.address());
  BOOST_TEST(a.endpoint().rfind("tcp://127.0.0.1:", 0) == 0u);
}

BOOST_AUTO_TEST_CASE(creation_does_not_wait_for_a_tower) {
  dafka::ProducerOptions o;
  o.node.towers = {"tcp://127.0.0.1:" + std::to_string(zstore::testing::free_port_range(2))};
  auto start = std::chrono::steady_clock::now();
  dafka::Producer p(o);
  BOOST_TEST(p.publish("t", "x") == 0u);
  BOOST_TEST(!p.flush(50ms));
  BOOST_TEST((std::chrono::steady_clock::now() - start < 2s));
}

BOOST_AUTO_TEST_CASE(rejects_bad_topics_and_tower_endpoints) {
  FakeTower tower;
  dafka::Producer p(options_for(tower));
  BOOST_CHECK_THROW(p.publish("", "x"), std::invalid_argument);
  BOOST_CHECK_THROW(p.publish(std::string("a\0b", 3), "x"), std::invalid_argument);
  BOOST_CHECK_THROW(p.publish(std::string(256, 'a'), "x"), std::invalid_argument);
  dafka::ProducerOptions bad;
  bad.node.towers = {"127.0.0.1:5580"};
  BOOST_CHECK_THROW(dafka::Producer{bad}, std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(flush_returns_once_the_store_acked_every_record) {
  Connected c(true);
  for (int i = 0; i < 5; ++i) BOOST_TEST(c.producer.publish("hello", "r" + std::to_string(i)) == std::uint64_t(i));
  BOOST_TEST(c.producer.flush(10s));
  BOOST_TEST(c.producer.unacked() == 0u);
  auto stored = c.store.stored(c.producer.address());
  BOOST_TEST(stored == (std::vector<std::string>{"r0", "r1", "r2", "r3", "r4"}), boost::test_tools::per_element());
  auto records = c.store.received_of<wire::Record>();
  BOOST_REQUIRE(!records.empty());
  BOOST_TEST(records[0].topic == "hello");
  BOOST_TEST(records[0].subject == "hello");
  BOOST_TEST(records[0].partition == c.producer.address());
}

BOOST_AUTO_TEST_CASE(records_published_before_the_store_connected_reach_it_through_head_and_fetch) {
  FakeTower tower;
  dafka::Producer producer(options_for(tower));
  BOOST_TEST(producer.publish("hello", "early") == 0u);
  FakeStore store(tower.endpoint(), true);
  store.connect(producer.endpoint());
  BOOST_TEST(producer.flush(10s));
  BOOST_TEST(store.stored(producer.address()) == std::vector<std::string>{"early"}, boost::test_tools::per_element());
  BOOST_TEST(!store.received_of<wire::Head>().empty());
}

BOOST_AUTO_TEST_CASE(unacked_records_are_kept_until_a_cumulative_ack) {
  Connected c(false);
  c.producer.publish("hello", "a");
  c.producer.publish("hello", "b");
  c.producer.publish("hello", "c");
  BOOST_TEST(!c.producer.flush(200ms));
  BOOST_TEST(c.producer.unacked() == 3u);
  c.store.send(wire::Ack{c.producer.address(), "hello", 1});
  BOOST_TEST(wait_until([&] { return c.producer.unacked() == 1; }));
  BOOST_TEST(!c.producer.flush(50ms));
  // An ACK for another partition or subject changes nothing.
  c.store.send(wire::Ack{std::string(32, 'A'), "hello", 2});
  c.store.send(wire::Ack{c.producer.address(), "other", 2});
  c.store.send(wire::Ack{c.producer.address(), "hello", 2});
  BOOST_TEST(c.producer.flush(10s));
  BOOST_TEST(c.producer.unacked() == 0u);
}

BOOST_AUTO_TEST_CASE(answers_fetch_with_exactly_count_direct_records_in_order) {
  Connected c(false);
  for (int i = 0; i < 6; ++i) c.producer.publish("hello", "r" + std::to_string(i));
  c.store.send(wire::Fetch{c.producer.address(), c.store.address(), "hello", 1, 3});
  BOOST_TEST(wait_until([&] { return c.store.received_of<wire::DirectRecord>().size() >= 3; }));
  // A second FETCH marks the end of the first answer: whatever came before it
  // belongs to the first.
  c.store.send(wire::Fetch{c.producer.address(), c.store.address(), "hello", 5, 1});
  BOOST_TEST(wait_until([&] { return c.store.received_of<wire::DirectRecord>().size() >= 4; }));
  auto direct = c.store.received_of<wire::DirectRecord>();
  BOOST_REQUIRE(direct.size() == 4u);
  std::uint64_t expect[] = {1, 2, 3, 5};
  for (std::size_t i = 0; i < 4; ++i) {
    BOOST_TEST(direct[i].sequence == expect[i]);
    BOOST_TEST(direct[i].topic == c.store.address());
    BOOST_TEST(direct[i].partition == c.producer.address());
    BOOST_TEST(direct[i].subject == "hello");
    BOOST_TEST(direct[i].content == "r" + std::to_string(expect[i]));
  }
}

BOOST_AUTO_TEST_CASE(fetch_is_answered_from_unacked_records_only) {
  Connected c(false);
  for (int i = 0; i < 4; ++i) c.producer.publish("hello", "r" + std::to_string(i));
  c.store.send(wire::Ack{c.producer.address(), "hello", 1});
  BOOST_TEST(wait_until([&] { return c.producer.unacked() == 2; }));
  c.store.send(wire::Fetch{c.producer.address(), c.store.address(), "hello", 0, 4});
  BOOST_TEST(wait_until([&] { return c.store.received_of<wire::DirectRecord>().size() >= 2; }));
  c.store.send(wire::Fetch{c.producer.address(), c.store.address(), "hello", 3, 1});
  BOOST_TEST(wait_until([&] { return c.store.received_of<wire::DirectRecord>().size() >= 3; }));
  auto direct = c.store.received_of<wire::DirectRecord>();
  BOOST_REQUIRE(direct.size() == 3u);
  BOOST_TEST(direct[0].sequence == 2u);
  BOOST_TEST(direct[1].sequence == 3u);
  BOOST_TEST(direct[2].sequence == 3u);
}

BOOST_AUTO_TEST_CASE(sends_head_with_the_last_sequence_periodically) {
  Connected c(false);
  c.producer.publish("hello", "a");
  c.producer.publish("hello", "b");
  BOOST_TEST(wait_until([&] {
    for (auto& h : c.store.received_of<wire::Head>())
      if (h.sequence == 1 && h.partition == c.producer.address() && h.topic == "hello") return true;
    return false;
  }));
}

BOOST_AUTO_TEST_CASE(beacons_reach_the_tower) {
  FakeTower tower;
  dafka::Producer p(options_for(tower));
  BOOST_TEST(wait_until([&] { return tower.beacons_seen() >= 2; }));
}

BOOST_AUTO_TEST_CASE(a_lost_ack_is_recovered_through_get_heads) {
  Connected c(false);
  c.producer.publish("hello", "a");
  c.producer.publish("hello", "b");
  // No ACK comes: after a head interval without progress the producer asks.
  BOOST_TEST(wait_until([&] {
    for (auto& g : c.store.received_of<wire::GetHeads>())
      if (g.topic == "hello" && g.address == c.producer.address()) return true;
    return false;
  }));
  // A head for another partition is no ACK of ours.
  c.store.send(wire::DirectHead{c.producer.address(), std::string(32, 'B'), "hello", 1});
  BOOST_TEST(!c.producer.flush(100ms));
  c.store.send(wire::DirectHead{c.producer.address(), c.producer.address(), "hello", 1});
  BOOST_TEST(c.producer.flush(10s));
  BOOST_TEST(c.producer.unacked() == 0u);
}

BOOST_AUTO_TEST_CASE(each_topic_has_its_own_sequence_and_acks) {
  Connected c(false);
  BOOST_TEST(c.producer.publish("a", "a0") == 0u);
  BOOST_TEST(c.producer.publish("b", "b0") == 0u);
  BOOST_TEST(c.producer.publish("a", "a1") == 1u);
  c.store.send(wire::Ack{c.producer.address(), "a", 1});
  BOOST_TEST(wait_until([&] { return c.producer.unacked() == 1; }));
  BOOST_TEST(!c.producer.flush(50ms));
  c.store.send(wire::Ack{c.producer.address(), "b", 0});
  BOOST_TEST(c.producer.flush(10s));
}
