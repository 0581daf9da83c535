#include "storage/chp/chp_epochs.h"

#include <boost/test/unit_test.hpp>

using zstore::storage::ChpEpochs;
using zstore::storage::common_point;
using zstore::storage::epochs_in_properties;
using zstore::storage::format_epochs;
using zstore::storage::parse_epochs;

BOOST_AUTO_TEST_CASE(epochs_round_trip_and_reject_garbage) {
  ChpEpochs e = {{0, 10}, {100, 140}, {200, 200}};
  BOOST_CHECK_EQUAL(format_epochs(e), "0:10,100:140,200:200");
  BOOST_CHECK(parse_epochs("0:10,100:140,200:200") == e);
  BOOST_CHECK(parse_epochs("") == ChpEpochs{});
  BOOST_CHECK(!parse_epochs("5:4"));           // last below base
  BOOST_CHECK(!parse_epochs("100:140,0:10"));  // not increasing
  BOOST_CHECK(!parse_epochs("1:2,"));
  BOOST_CHECK(!parse_epochs("1:x"));
  BOOST_CHECK(!parse_epochs("99999999999999999999999:1"));
}

// A KTHXBAI's properties (docs/chp-extensions.md): the epochs among the
// others; none when absent or malformed.
BOOST_AUTO_TEST_CASE(epochs_read_from_kthxbai_properties) {
  ChpEpochs e = {{0, 98}, {500, 509}};
  BOOST_CHECK(epochs_in_properties("epochs=0:98,500:509\nhistory-from=3\n") == e);
  BOOST_CHECK(epochs_in_properties("resumed=1\nepochs=0:98,500:509\n") == e);
  BOOST_CHECK(epochs_in_properties("resumed=1\n").empty());
  BOOST_CHECK(epochs_in_properties("").empty());
  BOOST_CHECK(epochs_in_properties("epochs=9:1\n").empty());
  BOOST_CHECK(epochs_in_properties("no equals sign").empty());
}

// The cases of a pair, written out by hand: the sequence up to which both
// applied the same updates.
BOOST_AUTO_TEST_CASE(common_point_of_two_histories) {
  // The passive followed to 98 of the active's 100; then took over (epoch 500).
  ChpEpochs old_active = {{0, 100}};
  ChpEpochs new_active = {{0, 98}, {500, 509}};
  BOOST_CHECK_EQUAL(common_point(old_active, new_active), 98u);
  BOOST_CHECK_EQUAL(common_point(new_active, old_active), 98u);
  // A follower fully caught up: everything is shared.
  BOOST_CHECK_EQUAL(common_point({{0, 98}, {500, 509}}, new_active), 509u);
  // One is behind in the same epoch: shared up to where it is.
  BOOST_CHECK_EQUAL(common_point({{0, 98}, {500, 503}}, new_active), 503u);
  // A partition: both started epochs after 98.
  BOOST_CHECK_EQUAL(common_point({{0, 98}, {600, 650}}, new_active), 98u);
  // Nothing shared.
  BOOST_CHECK_EQUAL(common_point({{7, 9}}, new_active), 0u);
  // Truncated lists align on the oldest epoch both hold.
  BOOST_CHECK_EQUAL(common_point({{500, 509}, {700, 800}}, {{0, 98}, {500, 509}, {700, 790}}), 790u);
}

BOOST_AUTO_TEST_CASE(clock_base_orders_by_time_and_separates_the_members) {
  using zstore::storage::epoch_clock_base;
  std::uint64_t t = 1'800'000'000'000;
  BOOST_CHECK_LT(epoch_clock_base(t, 1u << 21), epoch_clock_base(t + 1, 0));
  BOOST_CHECK_LT(epoch_clock_base(t, 0), epoch_clock_base(t, 1u << 21));
  BOOST_CHECK_LT(epoch_clock_base(t + 60ull * 365 * 86'400'000, 0), 1ull << 63);  // signed 64-bit safe until 2087
}

BOOST_AUTO_TEST_CASE(contains_sequence_is_true_from_each_base_to_its_last) {
  zstore::storage::ChpEpochs e = {{0, 10}, {100, 120}};
  for (std::uint64_t s : {0, 5, 10, 100, 101, 120}) BOOST_CHECK_MESSAGE(zstore::storage::contains_sequence(e, s), s);
  for (std::uint64_t s : {11, 99, 121}) BOOST_CHECK_MESSAGE(!zstore::storage::contains_sequence(e, s), s);
}

// Counted by hand: epochs 1..10 and 101..120 hold 10 + 20 sequences.
BOOST_AUTO_TEST_CASE(sequences_after_counts_each_epochs_sequences_above_the_point) {
  zstore::storage::ChpEpochs e = {{0, 10}, {100, 120}};
  BOOST_CHECK_EQUAL(zstore::storage::sequences_after(e, 0), 30u);
  BOOST_CHECK_EQUAL(zstore::storage::sequences_after(e, 4), 26u);
  BOOST_CHECK_EQUAL(zstore::storage::sequences_after(e, 10), 20u);
  BOOST_CHECK_EQUAL(zstore::storage::sequences_after(e, 50), 20u);  // between the epochs
  BOOST_CHECK_EQUAL(zstore::storage::sequences_after(e, 115), 5u);
  BOOST_CHECK_EQUAL(zstore::storage::sequences_after(e, 120), 0u);
  BOOST_CHECK_EQUAL(zstore::storage::sequences_after({}, 0), 0u);
}
