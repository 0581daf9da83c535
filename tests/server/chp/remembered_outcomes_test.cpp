// RememberedOutcomes (server/chp/remembered_outcomes.h): found by uuid,
// the first outcome kept, the oldest replaced once full, and the index
// right through many replacements (checked against a plain map).
#include "server/chp/remembered_outcomes.h"

#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <string>

using zstore::server::RememberedOutcomes;

namespace {

std::string uuid_of(std::uint64_t n) {
  std::string u(16, '\0');
  for (int i = 0; i < 8; ++i) u[static_cast<std::size_t>(i)] = static_cast<char>(n >> (8 * i));
  return u;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_remembered_uuid_keeps_its_first_sequence) {
  RememberedOutcomes r(4);
  BOOST_TEST(!r.find(uuid_of(1)));
  r.remember(uuid_of(1), 10);
  r.remember(uuid_of(1), 11);
  BOOST_TEST(r.find(uuid_of(1)).value() == 10u);
  r.remember("short", 5);  // not 16 bytes: ignored
  BOOST_TEST(!r.find("short"));
  BOOST_TEST(r.size() == 1u);
}

BOOST_AUTO_TEST_CASE(the_oldest_is_replaced_once_full) {
  RememberedOutcomes r(3);
  for (std::uint64_t n = 1; n <= 5; ++n) r.remember(uuid_of(n), n * 100);
  BOOST_TEST(!r.find(uuid_of(1)));
  BOOST_TEST(!r.find(uuid_of(2)));
  for (std::uint64_t n = 3; n <= 5; ++n) BOOST_TEST(r.find(uuid_of(n)).value() == n * 100);
  BOOST_TEST(r.size() == 3u);
}

// Many replacements with repeats: after each step the table answers as a
// map of the last `capacity` distinct uuids does (deletions by backward
// shift keep every run reachable).
BOOST_AUTO_TEST_CASE(it_answers_as_a_map_of_the_last_entries_through_many_replacements) {
  constexpr std::size_t kCapacity = 64;
  RememberedOutcomes r(kCapacity);
  std::deque<std::uint64_t> order;
  std::map<std::uint64_t, std::uint64_t> model;
  std::mt19937_64 rng(7);
  for (std::uint64_t step = 0; step < 20000; ++step) {
    std::uint64_t n = rng() % 300;
    if (!model.contains(n)) {
      if (order.size() == kCapacity) {
        model.erase(order.front());
        order.pop_front();
      }
      order.push_back(n);
      model[n] = step;
    }
    r.remember(uuid_of(n), step);
    if (step % 97 == 0) {
      for (std::uint64_t m = 0; m < 300; ++m) {
        auto want = model.find(m);
        auto got = r.find(uuid_of(m));
        BOOST_REQUIRE_EQUAL(got.has_value(), want != model.end());
        if (got) BOOST_REQUIRE_EQUAL(*got, want->second);
      }
    }
  }
}
