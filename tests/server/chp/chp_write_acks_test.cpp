// ChpWriteAcks: an active's applied answers held until its passive stored them.
#include <boost/test/unit_test.hpp>

#include "server/chp/chp_write_acks.h"

using zstore::server::ChpWriteAcks;
using zstore::server::ChpWriteRequests;
using Clock = ChpWriteAcks::Clock;
using namespace std::chrono_literals;

namespace {

ChpWriteRequests::Reply applied(const std::string& who, std::uint64_t sequence) {
  return {who, {zstore::protocol::chp::WriteOutcome::Kind::kApplied, std::string(16, 'u'), sequence, {}}};
}

std::vector<std::string> who(const std::vector<ChpWriteRequests::Reply>& replies) {
  std::vector<std::string> out;
  for (const auto& r : replies) out.push_back(r.identity);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(not_joined_before_the_passive_acknowledges) {
  ChpWriteAcks acks(400ms);
  BOOST_TEST(!acks.joined(Clock::now()));
}

BOOST_AUTO_TEST_CASE(an_answer_is_released_once_its_sequence_is_acknowledged) {
  ChpWriteAcks acks(400ms);
  auto t = Clock::now();
  acks.acknowledged(10, t);
  BOOST_REQUIRE(acks.joined(t));
  acks.hold(applied("a", 11), t);
  acks.hold(applied("b", 12), t);
  std::uint64_t timed_out = 0;
  BOOST_TEST(acks.due(t, &timed_out).empty());
  acks.acknowledged(11, t + 1ms);
  BOOST_TEST(who(acks.due(t + 1ms, &timed_out)) == std::vector<std::string>{"a"});
  acks.acknowledged(12, t + 2ms);
  BOOST_TEST(who(acks.due(t + 2ms, &timed_out)) == std::vector<std::string>{"b"});
  BOOST_TEST(timed_out == 0u);
  BOOST_TEST(acks.empty());
}

BOOST_AUTO_TEST_CASE(a_silent_passive_releases_after_the_wait_and_parts_the_pair_until_it_catches_up) {
  ChpWriteAcks acks(400ms);
  auto t = Clock::now();
  acks.acknowledged(10, t);
  acks.hold(applied("a", 11), t);
  BOOST_TEST((acks.next_deadline() == t + 400ms));
  std::uint64_t timed_out = 0;
  BOOST_TEST(who(acks.due(t + 400ms, &timed_out)) == std::vector<std::string>{"a"});
  BOOST_TEST(timed_out == 1u);
  acks.acknowledged(10, t + 401ms);  // alive, still behind: writes do not wait for it
  BOOST_TEST(!acks.joined(t + 401ms));
  acks.acknowledged(11, t + 402ms);  // caught up
  BOOST_TEST(acks.joined(t + 402ms));
  BOOST_TEST(!acks.joined(t + 802ms));  // no acknowledgement for the whole wait
}

BOOST_AUTO_TEST_CASE(reset_forgets_held_answers) {
  ChpWriteAcks acks(400ms);
  auto t = Clock::now();
  acks.acknowledged(10, t);
  acks.hold(applied("a", 11), t);
  acks.reset();
  BOOST_TEST(acks.empty());
  BOOST_TEST(!acks.joined(t));
  BOOST_TEST(acks.acknowledged() == 0u);
}
