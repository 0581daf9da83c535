// zstore-torture as a test: a one-minute run of SIGKILL/restart cycles of a
// real zstored under CHP and Dafka load must report cycles and no violation;
// bad command lines exit 2. (The Binary Star run is torture_ha_test.)
#include <boost/test/unit_test.hpp>

#include <regex>
#include <string>

#include "tests/support/test_support.h"

using zstore::testing::bin_path;
using zstore::testing::Process;
using zstore::testing::TempDir;
using namespace std::chrono_literals;

namespace {

int run(const std::vector<std::string>& args, const TempDir& dir, std::string* output,
        std::chrono::milliseconds timeout) {
  Process p(bin_path("zstore-torture"), args, dir.path() / "torture.log");
  int rc = p.wait(timeout);
  *output = p.log();
  return rc;
}

}  // namespace

BOOST_AUTO_TEST_CASE(one_minute_of_kill_cycles_finds_no_violation) {
  TempDir dir;
  std::string out;
  int rc = run({"--minutes", "1"}, dir, &out, 200s);
  BOOST_TEST_MESSAGE(out);
  BOOST_TEST(rc == 0, out);
  std::smatch m;
  BOOST_REQUIRE_MESSAGE(std::regex_search(out, m, std::regex("cycles: (\\d+) violations: (\\d+)")), out);
  BOOST_TEST(std::stoi(m[1]) >= 5, "too few kill cycles: " << m[1]);
  BOOST_TEST(std::stoi(m[2]) == 0);
  // Every cycle checked a non-empty snapshot and replayed ACKed Dafka records.
  BOOST_TEST(out.find("snapshot none") == std::string::npos, out);
  BOOST_TEST(std::regex_search(out, std::regex("dafka replayed [1-9]\\d*/")), out);
}

BOOST_AUTO_TEST_CASE(bad_command_lines_exit_2) {
  TempDir dir;
  std::string out;
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"--minutes"},
                                             {"--minutes", "x"},
                                             {"--minutes", "-1"},
                                             {"--seed", "1e3"},
                                             {"--bogus"},
                                             {"--wait-synced"},
                                             {"--min-up-ms", "500", "--max-up-ms", "100"},
                                             {"--counters", "17"},
                                             {"--ha", "--ha-fault", "partition", "--counters", "1"}}) {
    BOOST_TEST(run(args, dir, &out, 10s) == 2, args.front() << ": " << out);
    BOOST_TEST(out.find("usage:") != std::string::npos, out);
  }
  BOOST_TEST(run({"--help"}, dir, &out, 10s) == 0);
}
