// Dafka retention through zstored: with --dafka-retain-records the
// retention thread deletes the oldest records below a floor (metrics say
// how many, and what each topic holds), a FETCH below the floor is answered
// from the floor on, and our consumer reading from the beginning delivers
// from the floor and then stops FETCHing.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "client/dafka_consumer.h"
#include "client/dafka_producer.h"
#include "protocol/dafka_codec.h"
#include "tests/ops/ops_support.h"
#include "tests/support/dafka_node.h"

using namespace std::chrono_literals;
using zstore::testing::HttpZstored;
using zstore::testing::metric;
namespace wire = zstore::protocol::dafka;
namespace dafka = zstore::client::dafka;

namespace {

const std::string kTopic = "ret";
constexpr int kRecords = 100;
constexpr int kKept = 20;

struct Store {
  std::uint16_t base = zstore::testing::free_port_range(3);  // tower T, T+1; Dafka publisher T+2
  HttpZstored z{{"--tower-port", std::to_string(base), "--dafka-port", std::to_string(base + 2), "--beacon-interval-ms",
                 "100", "--dafka-retain-records", std::to_string(kKept), "--dafka-retention-interval-ms", "100"}};
  Store() { BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log()); }
  std::string tower() const { return "tcp://127.0.0.1:" + std::to_string(base); }
  std::string endpoint() const { return "tcp://127.0.0.1:" + std::to_string(base + 2); }
  double value(const std::string& sample) { return metric(z.metrics(), sample); }
  // Waits until retention deleted every record beyond the kept ones.
  bool wait_retained() {
    for (auto deadline = std::chrono::steady_clock::now() + 20s; std::chrono::steady_clock::now() < deadline;) {
      auto m = z.metrics();
      if (m.count("zstore_dafka_retention_deleted_records_total") &&
          metric(m, "zstore_dafka_retention_deleted_records_total") == kRecords - kKept)
        return true;
      std::this_thread::sleep_for(50ms);  // polling a deadline, not waiting for a fixed time
    }
    return false;
  }
};

dafka::NodeOptions node(const Store& s) {
  dafka::NodeOptions o;
  o.towers = {s.tower()};
  o.beacon_interval = 100ms;
  return o;
}

std::string content(int i) { return "content-" + std::to_string(i); }  // 10 bytes from 10 on

void produce(Store& s) {
  dafka::ProducerOptions po;
  po.node = node(s);
  po.head_interval = 200ms;
  dafka::Producer producer(po);
  BOOST_REQUIRE(producer.wait_connected(15s));
  for (int i = 0; i < kRecords; ++i) producer.publish(kTopic, content(i));
  BOOST_REQUIRE(producer.flush(20s));
}

}  // namespace

BOOST_AUTO_TEST_CASE(retention_keeps_the_newest_records_and_a_fetch_below_the_floor_starts_at_it) {
  Store s;
  produce(s);
  BOOST_REQUIRE_MESSAGE(s.wait_retained(), s.z.server.log());
  BOOST_TEST(s.value("zstore_dafka_topic_records{topic=\"" + kTopic + "\"}") == kKept);
  BOOST_TEST(s.value("zstore_dafka_topic_bytes{topic=\"" + kTopic + "\"}") == kKept * 10);
  BOOST_TEST(s.value("zstore_dafka_topic_partitions{topic=\"" + kTopic + "\"}") == 1);

  zmq::context_t ctx;
  zstore::testing::ScriptedDafkaNode c(ctx, s.base, {'D', 'E', 'L'});
  c.connect(s.endpoint());
  std::string partition;
  auto head = c.wait_for(
      [&](const wire::Message& m) {
        auto* h = std::get_if<wire::DirectHead>(&m);
        if (h && h->topic == c.address() && h->subject == kTopic) partition = h->partition;
        return h && h->sequence == kRecords - 1;
      },
      15s,
      [&] {
        c.send(wire::GetHeads{kTopic, c.address()});
      });
  BOOST_REQUIRE_MESSAGE(head, "no DIRECT-HEAD: the head must not move with the floor");
  std::vector<std::uint64_t> got;
  c.wait_for(
      [&](const wire::Message& m) {
        auto* d = std::get_if<wire::DirectRecord>(&m);
        if (d && d->topic == c.address()) got.push_back(d->sequence);
        return got.size() >= 5;
      },
      15s,
      [&] {
        got.clear();
        c.send(wire::Fetch{partition, c.address(), kTopic, 0, 5});  // below the floor (80)
      });
  BOOST_TEST(got == (std::vector<std::uint64_t>{80, 81, 82, 83, 84}));
}

BOOST_AUTO_TEST_CASE(our_consumer_from_the_beginning_moves_on_from_the_floor_and_stops_fetching) {
  Store s;
  produce(s);
  BOOST_REQUIRE_MESSAGE(s.wait_retained(), s.z.server.log());
  dafka::ConsumerOptions co;
  co.node = node(s);
  co.reset = dafka::ConsumerOptions::Reset::kEarliest;
  co.fetch_retry = 200ms;
  co.get_heads_retry = 300ms;
  dafka::Consumer consumer(co);
  consumer.subscribe({kTopic});
  std::vector<std::uint64_t> offsets;
  for (auto deadline = std::chrono::steady_clock::now() + 30s;
       offsets.size() < static_cast<std::size_t>(kKept) && std::chrono::steady_clock::now() < deadline;) {
    if (auto r = consumer.poll(200ms)) {
      BOOST_TEST(r->content == content(static_cast<int>(r->offset)));
      offsets.push_back(r->offset);
    }
  }
  BOOST_REQUIRE_EQUAL(offsets.size(), static_cast<std::size_t>(kKept));
  for (int i = 0; i < kKept; ++i) BOOST_TEST(offsets[i] == static_cast<std::uint64_t>(kRecords - kKept + i));
  // Nothing more to deliver, and no FETCH for the deleted offsets any more.
  BOOST_TEST(!consumer.poll(1s));
  double served = s.value("zstore_dafka_fetches_served_total");
  BOOST_TEST(!consumer.poll(1500ms));
  BOOST_TEST(s.value("zstore_dafka_fetches_served_total") == served);
}
