// The Dafka client against the real zstored (store node + embedded tower):
// producer -> zstored -> consumers, through the library and through
// zstore-cli, and records surviving a zstored SIGKILL once flushed.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <csignal>
#include <sstream>
#include <string>
#include <vector>

#include "client/dafka_consumer.h"
#include "client/dafka_producer.h"
#include "tests/support/test_support.h"
#include "tests/support/zstored.h"

namespace dafka = zstore::client::dafka;
using zstore::testing::bin_path;
using zstore::testing::Process;
using zstore::testing::TempDir;
using zstore::testing::Zstored;
using namespace std::chrono_literals;
using Reset = dafka::ConsumerOptions::Reset;

namespace {

// zstored with its tower at T and its store publisher at T+2.
struct Store {
  std::uint16_t tower_port = zstore::testing::free_port_range(3);
  Zstored zstored{{"--tower-port", std::to_string(tower_port), "--dafka-port", std::to_string(tower_port + 2),
                   "--beacon-interval-ms", "100"}};
  Store() { BOOST_REQUIRE_MESSAGE(zstored.start(), "zstored did not start: " + zstored.log()); }
  std::string tower() const { return "tcp://127.0.0.1:" + std::to_string(tower_port); }
};

dafka::NodeOptions node(const Store& s) {
  dafka::NodeOptions o;
  o.towers = {s.tower()};
  o.beacon_interval = 100ms;
  return o;
}

dafka::ProducerOptions producer_options(const Store& s) {
  dafka::ProducerOptions o;
  o.node = node(s);
  o.head_interval = 200ms;
  return o;
}

dafka::ConsumerOptions consumer_options(const Store& s, Reset reset) {
  dafka::ConsumerOptions o;
  o.node = node(s);
  o.reset = reset;
  o.fetch_retry = 200ms;
  o.get_heads_retry = 300ms;
  return o;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(flushed_records_reach_live_and_late_consumers_in_order) {
  Store store;
  dafka::Consumer live(consumer_options(store, Reset::kLatest));
  live.subscribe({"e2e"});
  BOOST_REQUIRE(live.wait_connected(15s));
  dafka::Producer producer(producer_options(store));
  BOOST_REQUIRE(producer.wait_connected(15s));

  // A latest consumer delivers only what is published after it joined the
  // producer's partition (it may discover the producer late): publish one
  // record at a time until it delivers one, then the rest.
  std::uint64_t next = 0;
  auto publish_next = [&] {
    BOOST_TEST(producer.publish("e2e", "m" + std::to_string(next)) == next);
    ++next;
  };
  std::optional<dafka::Record> first;
  for (auto deadline = std::chrono::steady_clock::now() + 15s; !first && next < 50;) {
    BOOST_REQUIRE(std::chrono::steady_clock::now() < deadline);
    publish_next();
    first = live.poll(200ms);
  }
  BOOST_REQUIRE_MESSAGE(first, "the live consumer delivered nothing");
  while (next < 50) publish_next();
  BOOST_REQUIRE(producer.flush(15s));

  // What it delivers is in order, exact, and ends with the last record.
  std::optional<std::uint64_t> prev;
  for (auto r = first; r; r = r->offset == 49 ? std::nullopt : live.poll(15s)) {
    BOOST_TEST(r->partition == producer.address());
    if (prev) BOOST_TEST(r->offset == *prev + 1);
    BOOST_TEST(r->content == "m" + std::to_string(r->offset));
    prev = r->offset;
  }
  BOOST_REQUIRE(prev.has_value());
  BOOST_TEST(*prev == 49u);

  dafka::Consumer late(consumer_options(store, Reset::kEarliest));
  late.subscribe({"e2e"});
  for (std::uint64_t i = 0; i < 50; ++i) {
    auto r = late.poll(15s);
    BOOST_REQUIRE(r.has_value());
    BOOST_TEST(r->offset == i);
    BOOST_TEST(r->content == "m" + std::to_string(i));
  }
  BOOST_TEST(!late.poll(300ms).has_value());
}

BOOST_AUTO_TEST_CASE(flushed_records_survive_a_zstored_sigkill) {
  Store store;
  {
    dafka::Producer producer(producer_options(store));
    for (int i = 0; i < 20; ++i) producer.publish("durable", "d" + std::to_string(i));
    BOOST_REQUIRE(producer.flush(15s));
  }
  store.zstored.kill(SIGKILL);
  store.zstored.wait_exit();
  BOOST_REQUIRE_MESSAGE(store.zstored.restart(), store.zstored.log());
  dafka::Consumer consumer(consumer_options(store, Reset::kEarliest));
  consumer.subscribe({"durable"});
  for (std::uint64_t i = 0; i < 20; ++i) {
    auto r = consumer.poll(15s);
    BOOST_REQUIRE(r.has_value());
    BOOST_TEST(r->offset == i);
    BOOST_TEST(r->content == "d" + std::to_string(i));
  }
}

BOOST_AUTO_TEST_CASE(cli_produce_then_consume_from_beginning) {
  Store store;
  TempDir dir;
  const std::string cli = bin_path("zstore-cli");
  Process produce("/bin/sh",
                  {"-c", "printf 'alpha\\nbeta\\ngamma\\n' | " + cli + " dafka produce cli-topic --tower " +
                             store.tower() + " --timeout-ms 20000"},
                  dir.path() / "produce.log");
  BOOST_TEST(produce.wait(30s) == 0, produce.log());
  Process consume(cli,
                  {"dafka", "consume", "cli-topic", "--from-beginning", "--count", "3", "--timeout-ms", "20000",
                   "--tower", store.tower()},
                  dir.path() / "consume.log");
  BOOST_TEST(consume.wait(30s) == 0, consume.log());
  BOOST_TEST(lines(consume.log()) == (std::vector<std::string>{"alpha", "beta", "gamma"}),
             boost::test_tools::per_element());
}
