// zstore-torture's faults of a whole Binary Star pair, a few cycles each:
// both members killed, one after the other with the survivor serving in
// between, and a partition of the HA link while both serve. None may lose
// a published update or reuse a sequence (the long runs are in
// docs/torture.md).
#include <boost/test/unit_test.hpp>

#include <regex>
#include <string>

#include "tests/support/test_support.h"

using zstore::testing::bin_path;
using zstore::testing::Process;
using zstore::testing::TempDir;
using namespace std::chrono_literals;

namespace {

void run_fault(const std::string& fault, int min_cycles) {
  TempDir dir;
  Process p(bin_path("zstore-torture"), {"--minutes", "0.3", "--ha", "--ha-fault", fault, "--max-up-ms", "1500"},
            dir.path() / "torture.log");
  int rc = p.wait(200s);
  std::string out = p.log();
  BOOST_TEST_MESSAGE(out);
  BOOST_TEST(rc == 0, out);
  std::smatch m;
  BOOST_REQUIRE_MESSAGE(std::regex_search(out, m, std::regex("cycles: (\\d+) violations: (\\d+)")), out);
  BOOST_TEST(std::stoi(m[1]) >= min_cycles, "too few cycles: " << m[1]);
  BOOST_TEST(std::stoi(m[2]) == 0);
  BOOST_TEST(out.find("snapshot none") == std::string::npos, out);
}

int usage_exit(const std::vector<std::string>& args) {
  TempDir dir;
  Process p(bin_path("zstore-torture"), args, dir.path() / "usage.log");
  return p.wait(10s);
}

}  // namespace

BOOST_AUTO_TEST_CASE(both_members_killed_and_restarted_in_either_order) { run_fault("both", 2); }

BOOST_AUTO_TEST_CASE(members_killed_one_after_the_other_with_the_survivor_serving) { run_fault("staggered", 2); }

BOOST_AUTO_TEST_CASE(ha_link_partitioned_while_both_serve_then_healed) { run_fault("partition", 2); }

BOOST_AUTO_TEST_CASE(ha_fault_needs_ha_and_a_known_fault) {
  BOOST_TEST(usage_exit({"--ha-fault", "both"}) == 2);
  BOOST_TEST(usage_exit({"--ha", "--ha-fault", "all"}) == 2);
}
