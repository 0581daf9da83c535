// ChpWriteRequests' memory of applied writes: a retry of a remembered UUID
// gets its first outcome; only the last `remembered` are kept, oldest out.
#include <boost/test/unit_test.hpp>

#include <string>

#include "server/chp/chp_write_requests.h"

using zstore::server::ChpWriteRequests;

namespace {

std::string uuid(char c) { return std::string(16, c); }

}  // namespace

BOOST_AUTO_TEST_CASE(a_remembered_write_is_answered_with_its_first_sequence) {
  ChpWriteRequests requests(4);
  requests.remember_applied(uuid('a'), 7);
  requests.remember_applied(uuid('a'), 9);  // a second note of the same write changes nothing
  auto earlier = requests.earlier(uuid('a'));
  BOOST_REQUIRE(earlier);
  BOOST_TEST(std::string(to_string(earlier->kind)) == "applied");
  BOOST_TEST(earlier->uuid == uuid('a'));
  BOOST_TEST(earlier->sequence == 7u);
  BOOST_TEST(!requests.earlier(uuid('b')));
  BOOST_TEST(!requests.earlier("short"));
}

BOOST_AUTO_TEST_CASE(only_the_last_remembered_writes_are_kept_oldest_first_out) {
  ChpWriteRequests requests(3);
  for (char c = 'a'; c <= 'f'; ++c) requests.remember_applied(uuid(c), static_cast<std::uint64_t>(c));
  for (char c = 'a'; c <= 'c'; ++c) BOOST_TEST(!requests.earlier(uuid(c)), c);
  for (char c = 'd'; c <= 'f'; ++c) {
    auto earlier = requests.earlier(uuid(c));
    BOOST_REQUIRE(earlier);
    BOOST_TEST(earlier->sequence == static_cast<std::uint64_t>(c));
  }
}

BOOST_AUTO_TEST_CASE(nothing_is_remembered_with_a_memory_of_zero) {
  ChpWriteRequests requests(0);
  requests.remember_applied(uuid('a'), 1);
  BOOST_TEST(!requests.earlier(uuid('a')));
}
