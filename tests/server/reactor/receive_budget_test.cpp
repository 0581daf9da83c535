// Receive budgets (server/reactor/receive_budget.h): how many of the largest
// messages of each protocol fit a socket's byte budget.
#include "server/reactor/receive_budget.h"

#include <boost/test/unit_test.hpp>

namespace dafka = zstore::protocol::dafka;
using zstore::server::largest_dafka_frame;
using zstore::server::largest_dafka_message;
using zstore::server::receive_hwm;

namespace {

dafka::Limits store_limits(std::size_t max_message_bytes) {  // as zstored sets them
  dafka::Limits limits;
  limits.max_content_bytes = max_message_bytes;
  limits.max_frame_bytes = max_message_bytes;
  return limits;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_dafka_record_is_two_frames_of_the_largest_size) {
  auto limits = store_limits(1u << 20);
  BOOST_CHECK_EQUAL(largest_dafka_message(limits), (2u << 20) + 18);
  BOOST_CHECK_EQUAL(largest_dafka_frame(limits), (1 << 20) + 64);
  // 64 MiB content, 32 MiB frame 0 (the codec's own defaults).
  BOOST_CHECK_EQUAL(largest_dafka_message(dafka::Limits{}), (96u << 20) + 18);
  BOOST_CHECK_EQUAL(largest_dafka_frame(dafka::Limits{}), (64 << 20) + 64);
}

BOOST_AUTO_TEST_CASE(the_high_water_mark_is_the_budget_over_the_largest_message_within_bounds) {
  BOOST_CHECK_EQUAL(receive_hwm(4ull << 30, largest_dafka_message(store_limits(1u << 20))), 2047);
  BOOST_CHECK_EQUAL(receive_hwm(4ull << 30, largest_dafka_message(store_limits(64u << 20))), 31);
  BOOST_CHECK_EQUAL(receive_hwm(1024, largest_dafka_message(store_limits(64u << 10))), 1);  // at least 1
  BOOST_CHECK_EQUAL(receive_hwm(4ull << 30, 100), 100000);                                  // at most kMaxReceiveHwm
}
