// plan_connections: the connection cap left once the database, the process
// and the HTTP server's connections have their file descriptors.
#include <boost/test/unit_test.hpp>

#include "server/zstored/fd_budget.h"

using zstore::server::kReservedFds;
using zstore::server::plan_connections;

BOOST_AUTO_TEST_CASE(the_derived_cap_is_the_limit_less_every_reserve) {
  auto plan = plan_connections(1024, 0, 64);
  BOOST_TEST(plan.error.empty());
  BOOST_TEST(plan.total == 1024 - kReservedFds - 64);
  BOOST_TEST(plan_connections(65536, 0, 0).total == 65536 - kReservedFds);
}

BOOST_AUTO_TEST_CASE(a_configured_cap_that_fits_is_kept) {
  auto plan = plan_connections(1024, 100, 64);
  BOOST_TEST(plan.error.empty());
  BOOST_TEST(plan.total == 100u);
}

BOOST_AUTO_TEST_CASE(a_cap_or_an_http_cap_that_does_not_fit_is_refused_naming_the_limit_needed) {
  auto plan = plan_connections(1024, 200, 64);
  BOOST_TEST(plan.total == 0u);
  BOOST_TEST(plan.error.find("at least " + std::to_string(200 + kReservedFds + 64)) != std::string::npos, plan.error);
  // HTTP's connections alone leave no room for any other.
  auto no_room = plan_connections(1024, 0, 1024 - kReservedFds);
  BOOST_TEST(!no_room.error.empty());
  BOOST_TEST(no_room.error.find("--http-max-connections") != std::string::npos, no_room.error);
}
