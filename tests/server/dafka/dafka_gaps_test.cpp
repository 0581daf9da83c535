// GapTracker (server/dafka/dafka_gaps.h): which range a Dafka store FETCHes, when
// it asks again and when it gives up, without sockets or storage.
#include "server/dafka/dafka_gaps.h"

#include <boost/test/unit_test.hpp>

#include <chrono>

using zstore::server::GapTracker;
using Action = GapTracker::Action;
using std::chrono::milliseconds;

namespace {

const GapTracker::Key kKey{"topic", "P"};
const GapTracker::Clock::time_point kT0{};

}  // namespace

BOOST_AUTO_TEST_CASE(an_unseen_partition_is_not_fetched) {
  GapTracker gaps(milliseconds(1000), 3);
  GapTracker::Range r;
  BOOST_CHECK(gaps.next(kKey, 0, std::nullopt, false, kT0, &r) == Action::kNone);
  BOOST_CHECK(!gaps.tracked(kKey));
}

BOOST_AUTO_TEST_CASE(the_missing_range_runs_from_the_head_to_the_highest_offset_seen) {
  GapTracker gaps(milliseconds(1000), 3);
  gaps.note_seen(kKey, 9);
  gaps.note_seen(kKey, 4);  // lower: the highest stays 9
  BOOST_CHECK_EQUAL(gaps.highest_seen(kKey).value(), 9u);
  GapTracker::Range r;
  BOOST_REQUIRE(gaps.next(kKey, 3, std::nullopt, false, kT0, &r) == Action::kFetch);
  BOOST_CHECK_EQUAL(r.from, 3u);
  BOOST_CHECK_EQUAL(r.end, 10u);
}

BOOST_AUTO_TEST_CASE(a_record_kept_after_the_gap_ends_the_range) {
  GapTracker gaps(milliseconds(1000), 3);
  gaps.note_seen(kKey, 50);
  GapTracker::Range r;
  BOOST_REQUIRE(gaps.next(kKey, 3, 7, false, kT0, &r) == Action::kFetch);
  BOOST_CHECK_EQUAL(r.from, 3u);
  BOOST_CHECK_EQUAL(r.end, 7u);
}

BOOST_AUTO_TEST_CASE(a_closed_gap_is_no_longer_tracked) {
  GapTracker gaps(milliseconds(1000), 3);
  gaps.note_seen(kKey, 5);
  GapTracker::Range r;
  BOOST_CHECK(gaps.next(kKey, 6, std::nullopt, false, kT0, &r) == Action::kNone);  // 0..5 stored
  BOOST_CHECK(!gaps.tracked(kKey));
  BOOST_CHECK_EQUAL(gaps.size(), 0u);
}

BOOST_AUTO_TEST_CASE(the_same_range_is_asked_again_only_after_the_retry_time) {
  GapTracker gaps(milliseconds(1000), 3);
  gaps.note_seen(kKey, 5);
  GapTracker::Range r;
  BOOST_REQUIRE(gaps.next(kKey, 2, std::nullopt, false, kT0, &r) == Action::kFetch);
  gaps.asked(kKey, 2, false, kT0);
  BOOST_CHECK(gaps.next(kKey, 2, std::nullopt, false, kT0 + milliseconds(999), &r) == Action::kNone);
  BOOST_CHECK(gaps.next(kKey, 2, std::nullopt, false, kT0 + milliseconds(1000), &r) == Action::kFetch);
  // A range that moved (records arrived) is asked at once.
  BOOST_CHECK(gaps.next(kKey, 4, std::nullopt, false, kT0 + milliseconds(1), &r) == Action::kFetch);
  BOOST_CHECK_EQUAL(r.from, 4u);
}

BOOST_AUTO_TEST_CASE(the_timer_gives_up_after_max_retries_of_the_same_range) {
  GapTracker gaps(milliseconds(10), 3);
  gaps.note_seen(kKey, 5);
  GapTracker::Range r;
  auto t = kT0;
  for (int i = 0; i < 3; ++i, t += milliseconds(10)) {
    BOOST_REQUIRE(gaps.next(kKey, 2, std::nullopt, true, t, &r) == Action::kFetch);
    gaps.asked(kKey, 2, true, t);
  }
  BOOST_CHECK(gaps.next(kKey, 2, std::nullopt, true, t, &r) == Action::kGiveUp);
  BOOST_CHECK_EQUAL(r.from, 2u);
  BOOST_CHECK_EQUAL(r.end, 6u);
  // Asked by a record or HEAD (not the timer), it is still fetched.
  BOOST_CHECK(gaps.next(kKey, 2, std::nullopt, false, t, &r) == Action::kFetch);
  gaps.reset_retries(kKey);
  BOOST_CHECK(gaps.next(kKey, 2, std::nullopt, true, t, &r) == Action::kFetch);
}

BOOST_AUTO_TEST_CASE(retries_start_again_when_the_range_moves) {
  GapTracker gaps(milliseconds(10), 2);
  gaps.note_seen(kKey, 9);
  GapTracker::Range r;
  auto t = kT0;
  for (int i = 0; i < 2; ++i, t += milliseconds(10)) {
    BOOST_REQUIRE(gaps.next(kKey, 2, std::nullopt, true, t, &r) == Action::kFetch);
    gaps.asked(kKey, 2, true, t);
  }
  BOOST_CHECK(gaps.next(kKey, 3, std::nullopt, true, t, &r) == Action::kFetch);  // 2 arrived: a new range
}

BOOST_AUTO_TEST_CASE(forget_drops_the_partition) {
  GapTracker gaps(milliseconds(10), 2);
  gaps.note_seen(kKey, 9);
  gaps.note_seen({"topic", "Q"}, 1);
  BOOST_CHECK_EQUAL(gaps.keys().size(), 2u);
  gaps.forget(kKey);
  BOOST_CHECK(!gaps.tracked(kKey));
  BOOST_CHECK_EQUAL(gaps.keys().size(), 1u);
}
