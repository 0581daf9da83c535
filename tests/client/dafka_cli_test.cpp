// zstore-cli dafka produce/consume against a fake tower and store.
#include <boost/test/unit_test.hpp>

#include <csignal>
#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "client/dafka_producer.h"
#include "tests/client/dafka_fake_peers.h"
#include "tests/support/test_support.h"

namespace dafka = zstore::client::dafka;
using zstore::testing::bin_path;
using zstore::testing::FakeStore;
using zstore::testing::FakeTower;
using zstore::testing::Process;
using zstore::testing::TempDir;
using namespace std::chrono_literals;

namespace {

// Runs `sh -c script` with the output in a log; returns {exit code, log}.
std::pair<int, std::string> run_shell(const TempDir& dir, const std::string& script,
                                      std::chrono::milliseconds timeout = 30s) {
  static int n = 0;
  Process p("/bin/sh", {"-c", script}, dir.path() / ("cli" + std::to_string(++n) + ".log"));
  int code = p.wait(timeout);
  return {code, p.log()};
}

std::string cli() { return bin_path("zstore-cli"); }

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(produce_exits_0_once_the_store_acked_every_line) {
  TempDir dir;
  FakeTower tower;
  FakeStore store(tower.endpoint(), true, true);
  auto [code, log] = run_shell(dir, "printf 'one\\ntwo\\nthree\\n' | " + cli() + " dafka produce hello --tower " +
                                        tower.endpoint() + " --timeout-ms 20000");
  BOOST_TEST(code == 0, log);
  auto stored = store.stored_all();
  BOOST_REQUIRE(stored.size() == 1u);
  BOOST_TEST(stored.begin()->second == (std::vector<std::string>{"one", "two", "three"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(produce_exits_1_when_no_store_acks_in_time) {
  TempDir dir;
  FakeTower tower;
  auto [code, log] =
      run_shell(dir, "echo x | " + cli() + " dafka produce hello --tower " + tower.endpoint() + " --timeout-ms 300");
  BOOST_TEST(code == 1, log);
  BOOST_TEST(log.find("not acknowledged") != std::string::npos, log);
}

BOOST_AUTO_TEST_CASE(consume_from_beginning_prints_stored_records_and_stops_at_count) {
  TempDir dir;
  FakeTower tower;
  FakeStore store(tower.endpoint(), true, true);
  {
    dafka::ProducerOptions o;
    o.node.towers = {tower.endpoint()};
    o.node.beacon_interval = 100ms;
    o.head_interval = 200ms;
    dafka::Producer producer(o);
    for (auto s : {"a", "b", "c"}) producer.publish("hello", s);
    BOOST_REQUIRE(producer.flush(10s));
  }
  auto [code, log] =
      run_shell(dir, cli() + " dafka consume hello --from-beginning --count 3 --timeout-ms 20000 --tower " +
                         tower.endpoint() + " 2>/dev/null");
  BOOST_TEST(code == 0, log);
  BOOST_TEST(lines(log) == (std::vector<std::string>{"a", "b", "c"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(consume_exits_1_when_count_records_do_not_arrive_in_time) {
  TempDir dir;
  FakeTower tower;
  auto [code, log] =
      run_shell(dir, cli() + " dafka consume hello --count 1 --timeout-ms 300 --tower " + tower.endpoint());
  BOOST_TEST(code == 1, log);
  BOOST_TEST(log.find("received 0 of 1") != std::string::npos, log);
}

BOOST_AUTO_TEST_CASE(consume_runs_until_sigterm_and_exits_0) {
  TempDir dir;
  FakeTower tower;
  Process p(cli(), {"dafka", "consume", "hello", "--tower", tower.endpoint()}, dir.path() / "consume.log");
  // Running once it beacons.
  BOOST_TEST(zstore::testing::wait_until([&] { return tower.beacons_seen() > 0; }));
  p.kill(SIGTERM);
  BOOST_TEST(p.wait(10s) == 0, p.log());
}

BOOST_AUTO_TEST_CASE(bad_command_lines_exit_2_with_a_message) {
  TempDir dir;
  for (std::string args :
       {"dafka", "dafka frobnicate hello", "dafka produce", "dafka produce a b", "dafka consume hello --count 0",
        "dafka consume hello --count x", "dafka produce hello --count 3", "dafka produce hello --from-beginning",
        "dafka consume hello --bogus", "dafka consume hello --tower 127.0.0.1:5580",
        "dafka consume hello --timeout-ms -5"}) {
    auto [code, log] = run_shell(dir, cli() + " " + args + " </dev/null");
    BOOST_TEST(code == 2, args << ": " << log);
    BOOST_TEST(log.find("zstore-cli dafka: ") != std::string::npos, args << ": " << log);
  }
}

BOOST_AUTO_TEST_CASE(help_exits_0_and_lists_both_commands) {
  TempDir dir;
  auto [code, log] = run_shell(dir, cli() + " dafka --help");
  BOOST_TEST(code == 0);
  BOOST_TEST(log.find("dafka produce TOPIC") != std::string::npos, log);
  BOOST_TEST(log.find("dafka consume TOPIC") != std::string::npos, log);
  auto [top, top_log] = run_shell(dir, cli() + " --help");
  BOOST_TEST(top == 0);
  BOOST_TEST(top_log.find("dafka") != std::string::npos, top_log);
}
