// FetchPump (sliced FETCH answers), without sockets (tower endpoints: tests/protocol/endpoint_test).
#include "server/dafka/dafka_fetches.h"

#include <boost/test/unit_test.hpp>

#include <memory>
#include <string>
#include <vector>

#include "protocol/dafka_codec.h"
#include "server/dafka/dafka_discovery.h"

using zstore::server::FetchPump;
namespace dafka = zstore::protocol::dafka;

namespace {

// A cursor over offsets [from, from + n).
class FakeCursor final : public zstore::storage::DafkaCursor {
 public:
  FakeCursor(std::uint64_t from, std::uint64_t n) : next_(from), end_(from + n) {}
  bool next(zstore::storage::DafkaRecord* out) override {
    if (next_ == end_) return false;
    *out = {"hello", "0123456789ABCDEF0123456789ABCDEF", next_, "c" + std::to_string(next_)};
    ++next_;
    return true;
  }
  zstore::storage::Status status() const override { return zstore::storage::Status::Ok(); }

 private:
  std::uint64_t next_, end_;
};

struct Sent {
  std::string requester;
  std::uint64_t sequence;
};

Sent decode(zstore::protocol::FrameViews frames) {
  auto m = dafka::decode(frames);
  BOOST_REQUIRE(m);
  auto& d = std::get<dafka::DirectRecord>(*m);
  return {d.topic, d.sequence};
}

}  // namespace

BOOST_AUTO_TEST_CASE(pump_sends_every_record_in_order_within_the_budget) {
  FetchPump pump(4);
  BOOST_REQUIRE(pump.start("A", std::make_unique<FakeCursor>(5, 3)));
  std::vector<Sent> sent;
  auto send = [&](zstore::protocol::FrameViews f) {
    sent.push_back(decode(f));
    return true;
  };
  BOOST_CHECK_EQUAL(pump.pump(2, send), 2u);
  BOOST_CHECK(pump.active());
  BOOST_CHECK_EQUAL(pump.pump(10, send), 1u);
  BOOST_CHECK(!pump.active());
  BOOST_REQUIRE_EQUAL(sent.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    BOOST_CHECK_EQUAL(sent[i].requester, "A");
    BOOST_CHECK_EQUAL(sent[i].sequence, 5 + i);
  }
}

BOOST_AUTO_TEST_CASE(would_block_keeps_the_message_for_the_next_turn) {
  FetchPump pump(4);
  BOOST_REQUIRE(pump.start("A", std::make_unique<FakeCursor>(0, 2)));
  BOOST_CHECK_EQUAL(pump.pump(10, [](zstore::protocol::FrameViews) { return false; }), 0u);
  BOOST_CHECK(pump.blocked());
  std::vector<Sent> sent;
  pump.pump(10, [&](zstore::protocol::FrameViews f) {
    sent.push_back(decode(f));
    return true;
  });
  BOOST_REQUIRE_EQUAL(sent.size(), 2u);
  BOOST_CHECK_EQUAL(sent[0].sequence, 0u);
  BOOST_CHECK_EQUAL(sent[1].sequence, 1u);
}

BOOST_AUTO_TEST_CASE(a_blocked_requester_does_not_hold_up_the_others) {
  FetchPump pump(4);
  BOOST_REQUIRE(pump.start("SLOW", std::make_unique<FakeCursor>(0, 5)));
  BOOST_REQUIRE(pump.start("FAST", std::make_unique<FakeCursor>(0, 5)));
  std::vector<Sent> sent;
  pump.pump(100, [&](zstore::protocol::FrameViews f) {
    Sent s = decode(f);
    if (s.requester == "SLOW") return false;
    sent.push_back(s);
    return true;
  });
  BOOST_CHECK_EQUAL(sent.size(), 5u);
  BOOST_CHECK(pump.blocked());
  BOOST_CHECK(pump.active());
}

BOOST_AUTO_TEST_CASE(sessions_are_bounded) {
  FetchPump pump(1);
  BOOST_CHECK(pump.start("A", std::make_unique<FakeCursor>(0, 1)));
  BOOST_CHECK(!pump.start("B", std::make_unique<FakeCursor>(0, 1)));
}

namespace {

// Records of two partitions in one cursor: the header of each must name its own.
class TwoPartitionCursor final : public zstore::storage::DafkaCursor {
 public:
  bool next(zstore::storage::DafkaRecord* out) override {
    if (n_ == 4) return false;
    bool first = n_ < 2;
    *out = {first ? "hello" : "other", first ? "P" : "Q", 10 + n_, "c" + std::to_string(n_)};
    ++n_;
    return true;
  }
  zstore::storage::Status status() const override { return zstore::storage::Status::Ok(); }

 private:
  std::uint64_t n_ = 0;
};

}  // namespace

BOOST_AUTO_TEST_CASE(each_header_names_the_partition_of_its_record) {
  FetchPump pump(4);
  BOOST_REQUIRE(pump.start("A", std::make_unique<TwoPartitionCursor>()));
  std::vector<dafka::DirectRecord> sent;
  bool block_once = true;
  while (pump.active()) {
    pump.pump(1, [&](zstore::protocol::FrameViews f) {
      if (block_once && sent.size() == 2) {  // a pending record is sent as read
        block_once = false;
        return false;
      }
      auto m = dafka::decode(f);
      BOOST_REQUIRE(m);
      sent.push_back(std::get<dafka::DirectRecord>(*m));
      return true;
    });
  }
  const dafka::DirectRecord expected[] = {{"A", "P", "hello", 10, "c0"},
                                          {"A", "P", "hello", 11, "c1"},
                                          {"A", "Q", "other", 12, "c2"},
                                          {"A", "Q", "other", 13, "c3"}};
  BOOST_REQUIRE_EQUAL(sent.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) BOOST_CHECK(sent[i] == expected[i]);
}

// The trailer (the store's DIRECT-HEAD after an answer short of its head)
// goes once, after the session's last record, also when its send would
// block at first; it does not count as a record.
BOOST_AUTO_TEST_CASE(a_trailer_follows_the_last_record_once) {
  FetchPump pump(4);
  auto trailer = dafka::encode(dafka::DirectHead{"A", "0123456789ABCDEF0123456789ABCDEF", "hello", 9});
  BOOST_REQUIRE(pump.start("A", std::make_unique<FakeCursor>(0, 3), trailer));
  std::vector<dafka::Message> sent;
  bool block_trailer = true;
  auto send = [&](zstore::protocol::FrameViews f) {
    auto m = dafka::decode(f);
    BOOST_REQUIRE(m);
    if (std::holds_alternative<dafka::DirectHead>(*m) && block_trailer) {
      block_trailer = false;
      return false;
    }
    sent.push_back(*m);
    return true;
  };
  BOOST_CHECK_EQUAL(pump.pump(10, send), 3u);
  BOOST_CHECK(pump.active());  // the trailer would have blocked
  BOOST_CHECK_EQUAL(pump.trailers_sent(), 0u);
  BOOST_CHECK_EQUAL(pump.pump(10, send), 0u);
  BOOST_CHECK(!pump.active());
  BOOST_CHECK_EQUAL(pump.trailers_sent(), 1u);
  BOOST_REQUIRE_EQUAL(sent.size(), 4u);
  for (std::uint64_t i = 0; i < 3; ++i) BOOST_CHECK_EQUAL(std::get<dafka::DirectRecord>(sent[i]).sequence, i);
  BOOST_CHECK_EQUAL(std::get<dafka::DirectHead>(sent[3]).sequence, 9u);
  // Without a trailer a session ends with its last record.
  BOOST_REQUIRE(pump.start("A", std::make_unique<FakeCursor>(0, 1)));
  BOOST_CHECK_EQUAL(pump.pump(10, send), 1u);
  BOOST_CHECK(!pump.active());
  BOOST_CHECK_EQUAL(pump.trailers_sent(), 1u);
}

BOOST_AUTO_TEST_CASE(send_pace_lets_a_window_s_bytes_through_and_one_message_of_any_size) {
  using zstore::server::SendPace;
  SendPace pace(100, std::chrono::milliseconds(20));
  auto t = SendPace::Clock::now();
  BOOST_TEST(pace.room(60, t));
  pace.spend(60);
  BOOST_TEST(pace.room(40, t));
  pace.spend(40);
  BOOST_TEST(!pace.room(1, t + std::chrono::milliseconds(19)));
  auto next = t + std::chrono::milliseconds(20);
  BOOST_TEST(pace.room(500, next));  // the first of a window, however large
  pace.spend(500);
  BOOST_TEST(!pace.room(1, next));
  SendPace off(0, std::chrono::milliseconds(20));
  off.spend(1000);
  BOOST_TEST(off.room(1000, t));
}
