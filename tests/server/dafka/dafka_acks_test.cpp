// The Dafka store's ACK policy (server/dafka/dafka_acks.h): one cumulative ACK per
// partition per stored batch, at the partition's head.
#include "server/dafka/dafka_acks.h"

#include <boost/test/unit_test.hpp>

#include <map>
#include <string>
#include <vector>

using zstore::server::acks_after_batch;
using zstore::server::partitions_touched;
using zstore::storage::DafkaRecord;
using zstore::storage::DafkaRecordRef;

BOOST_AUTO_TEST_CASE(a_batch_touches_each_partition_once_with_its_highest_offset) {
  std::vector<DafkaRecord> batch = {
      {"t", "A", 4, "x"}, {"t", "B", 9, "x"}, {"t", "A", 7, "x"}, {"u", "A", 1, "x"}, {"t", "A", 5, "x"}};
  std::vector<DafkaRecordRef> refs(batch.begin(), batch.end());
  auto touched = partitions_touched(refs);
  BOOST_REQUIRE_EQUAL(touched.size(), 3u);
  BOOST_CHECK(touched[0].subject == "t" && touched[0].partition == "A");
  BOOST_CHECK_EQUAL(touched[0].highest, 7u);
  BOOST_CHECK(touched[1].subject == "t" && touched[1].partition == "B");
  BOOST_CHECK_EQUAL(touched[1].highest, 9u);
  BOOST_CHECK(touched[2].subject == "u" && touched[2].partition == "A");  // same partition, another topic
  BOOST_CHECK_EQUAL(touched[2].highest, 1u);
}

BOOST_AUTO_TEST_CASE(one_ack_per_partition_at_its_head_not_past_a_gap) {
  // A: 0..9 stored but 5 missing: head 4, though the batch carried 9.
  std::vector<DafkaRecord> batch;
  for (std::uint64_t o = 0; o < 10; ++o) {
    if (o != 5) batch.push_back({"t", "A", o, "x"});
  }
  batch.push_back({"t", "B", 3, "x"});
  std::map<std::string, std::uint64_t> heads = {{"A", 4}};  // B: offsets 0..2 missing, no head yet
  auto head_of = [&](std::string_view subject, std::string_view partition) -> std::optional<std::uint64_t> {
    BOOST_CHECK_EQUAL(subject, "t");
    auto it = heads.find(std::string(partition));
    if (it == heads.end()) return std::nullopt;
    return it->second;
  };
  std::vector<DafkaRecordRef> refs(batch.begin(), batch.end());
  auto touched = partitions_touched(refs);
  auto acks = acks_after_batch(touched, head_of);
  BOOST_REQUIRE_EQUAL(acks.size(), 1u);  // one for A's nine records, none for B
  BOOST_CHECK_EQUAL(acks[0].topic, "A");
  BOOST_CHECK_EQUAL(acks[0].subject, "t");
  BOOST_CHECK_EQUAL(acks[0].sequence, 4u);
}

BOOST_AUTO_TEST_CASE(no_records_no_acks) {
  std::vector<DafkaRecordRef> none;
  auto touched = partitions_touched(none);
  BOOST_CHECK(touched.empty());
  BOOST_CHECK(acks_after_batch(touched, [](auto, auto) { return std::optional<std::uint64_t>(1); }).empty());
}
