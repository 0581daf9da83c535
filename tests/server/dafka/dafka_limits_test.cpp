// PartitionLimits (which new Dafka partitions the store takes), without sockets.
#include "server/dafka/dafka_limits.h"

#include <boost/test/unit_test.hpp>

using zstore::server::PartitionLimits;
using zstore::server::PartitionLimitsConfig;
using zstore::server::PartitionRefusal;
using zstore::server::PartitionsHeld;
using namespace std::chrono_literals;

namespace {
PartitionLimitsConfig limits(std::uint64_t topics, std::uint64_t partitions, std::uint64_t per_topic,
                             std::uint64_t new_ones) {
  return {topics, partitions, per_topic, new_ones, 1000ms};
}
const auto t0 = PartitionLimits::Clock::now();
}  // namespace

BOOST_AUTO_TEST_CASE(a_new_topic_past_the_topic_limit_is_refused_a_known_topic_is_not) {
  PartitionLimits l(limits(2, 0, 0, 0));
  BOOST_CHECK(l.admit({1, 5, 0}, t0) == PartitionRefusal::kNone);
  BOOST_CHECK(l.admit({2, 5, 0}, t0) == PartitionRefusal::kTopics);
  BOOST_CHECK(l.admit({2, 5, 3}, t0) == PartitionRefusal::kNone);  // a new partition of a topic held
}

BOOST_AUTO_TEST_CASE(partitions_in_total_and_per_topic_are_bounded) {
  PartitionLimits l(limits(0, 10, 3, 0));
  BOOST_CHECK(l.admit({1, 9, 2}, t0) == PartitionRefusal::kNone);
  BOOST_CHECK(l.admit({1, 10, 2}, t0) == PartitionRefusal::kPartitions);
  BOOST_CHECK(l.admit({1, 9, 3}, t0) == PartitionRefusal::kPartitionsInTopic);
}

BOOST_AUTO_TEST_CASE(new_partitions_are_bounded_per_interval) {
  PartitionLimits l(limits(0, 0, 0, 2));
  BOOST_CHECK(l.admit({}, t0) == PartitionRefusal::kNone);
  BOOST_CHECK(l.admit({}, t0 + 10ms) == PartitionRefusal::kNone);
  BOOST_CHECK(l.admit({}, t0 + 20ms) == PartitionRefusal::kNewPartitions);
  BOOST_CHECK(l.admit({}, t0 + 999ms) == PartitionRefusal::kNewPartitions);
  BOOST_CHECK(l.admit({}, t0 + 1000ms) == PartitionRefusal::kNone);  // the next interval
}

BOOST_AUTO_TEST_CASE(a_refusal_does_not_use_up_the_interval) {
  PartitionLimits l(limits(0, 1, 0, 1));
  BOOST_CHECK(l.admit({0, 1, 0}, t0) == PartitionRefusal::kPartitions);
  BOOST_CHECK(l.admit({0, 0, 0}, t0) == PartitionRefusal::kNone);
}

BOOST_AUTO_TEST_CASE(zero_means_no_limit) {
  PartitionLimits l(limits(0, 0, 0, 0));
  for (int i = 0; i < 10000; ++i) BOOST_REQUIRE(l.admit({1u << 30, 1u << 30, 1u << 30}, t0) == PartitionRefusal::kNone);
}
