// Monitoring against Prometheus's own tools: a real zstored's /metrics (CHP,
// Dafka store, embedded tower, after writes and a malformed message) passes
// `promtool check metrics`, and docs/zstore-alerts.yml passes `promtool
// check rules` and names only metrics zstored exports or the file lists as
// not exported yet.
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "tests/ops/ops_support.h"
#include "tests/support/chp_peer.h"

using namespace zstore::testing;
using namespace std::chrono_literals;

namespace {

const std::string kPromtool = ZSTORE_PROMTOOL;
const std::string kAlerts = ZSTORE_ALERTS_FILE;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A zstored with every part on (CHP, Dafka store, embedded tower, HTTP) and
// some traffic behind its counters; returns its /metrics text.
std::string live_metrics() {
  std::uint16_t tower = free_port_range(3);
  HttpZstored z({"--tower-port", std::to_string(tower), "--dafka-port", std::to_string(tower + 2)});
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  zmq::context_t ctx;
  ChpPeer peer(ctx, "tcp://127.0.0.1", z.server.chp_port());
  BOOST_REQUIRE(peer.wait_connected());
  peer.set("prom/a", "1");
  BOOST_REQUIRE(peer.wait_kvpub("prom/a", 10s));
  HttpReply r = http_request(z.http_port, "GET", "/metrics");
  BOOST_REQUIRE_EQUAL(r.status, 200);
  return r.body;
}

void require_promtool() {
  std::string out;
  BOOST_REQUIRE_MESSAGE(run_command({"/bin/sh", "-c", "command -v \"$0\"", kPromtool}, &out) == 0,
                        "promtool not found: apt-get install prometheus (tools/test does)");
}

}  // namespace

BOOST_AUTO_TEST_CASE(metrics_pass_promtool_check_metrics) {
  require_promtool();
  TempDir dir;
  std::string text = live_metrics();
  BOOST_REQUIRE(text.find("zstore_dafka_records_stored_total") != std::string::npos);
  BOOST_REQUIRE(text.find("zstore_tower_beacons_forwarded_total") != std::string::npos);
  std::string file = (dir.path() / "metrics.txt").string();
  std::ofstream(file) << text;
  std::string out;
  int rc = run_command({"/bin/sh", "-c", "\"$0\" check metrics < \"$1\"", kPromtool, file}, &out);
  BOOST_CHECK_MESSAGE(rc == 0, "promtool check metrics exited " << rc << ": " << out);
  BOOST_CHECK_MESSAGE(out.empty(), "promtool check metrics: " << out);
}

BOOST_AUTO_TEST_CASE(broken_metrics_fail_promtool_check_metrics) {
  require_promtool();
  // The check above can fail: a family without HELP and a counter without _total.
  TempDir dir;
  std::string file = (dir.path() / "metrics.txt").string();
  std::ofstream(file) << "# TYPE zstore_bad counter\nzstore_bad 1\n";
  std::string out;
  int rc = run_command({"/bin/sh", "-c", "\"$0\" check metrics < \"$1\"", kPromtool, file}, &out);
  BOOST_CHECK_NE(rc, 0);
}

BOOST_AUTO_TEST_CASE(alert_rules_pass_promtool_check_rules) {
  require_promtool();
  std::string out;
  int rc = run_command({"/bin/sh", "-c", "\"$0\" check rules \"$1\"", kPromtool, kAlerts}, &out);
  BOOST_CHECK_MESSAGE(rc == 0, "promtool check rules exited " << rc << ": " << out);
  BOOST_CHECK_MESSAGE(out.find("SUCCESS") != std::string::npos, out);
}

BOOST_AUTO_TEST_CASE(alert_rules_use_exported_metrics_or_say_they_are_not) {
  std::string rules = read_file(kAlerts);
  BOOST_REQUIRE(!rules.empty());
  // Names declared as not exported yet: "#   zstore_x ..." in the header.
  std::set<std::string> future;
  std::regex declared(R"(^#\s+(zstore_[a-z_]+)\s)", std::regex::multiline);
  for (std::sregex_iterator it(rules.begin(), rules.end(), declared), end; it != end; ++it) future.insert((*it)[1]);

  std::string metrics = live_metrics();
  std::regex expr_line(R"(expr:(.*))");
  std::regex name(R"(zstore_[a-z_]+)");
  int used = 0;
  for (std::sregex_iterator e(rules.begin(), rules.end(), expr_line), end; e != end; ++e) {
    std::string expr = (*e)[1];
    for (std::sregex_iterator n(expr.begin(), expr.end(), name); n != end; ++n) {
      std::string metric = n->str();
      ++used;
      bool exported = metrics.find("# TYPE " + metric + " ") != std::string::npos;
      BOOST_CHECK_MESSAGE(exported || future.count(metric),
                          metric << " is used by an alert but neither exported nor listed as not exported yet");
      BOOST_CHECK_MESSAGE(!(exported && future.count(metric)), metric << " is exported: drop it from the list");
    }
  }
  BOOST_TEST(used > 5);
}

// The age ZstoreLoopStalled alerts on: one sample per enabled loop, a few
// milliseconds old on a running server (its loops turn at least every
// HUGZ/timer interval).
BOOST_AUTO_TEST_CASE(loop_heartbeat_ages_are_exported_per_loop) {
  std::string metrics = live_metrics();
  BOOST_REQUIRE(metrics.find("# TYPE zstore_loop_heartbeat_age_seconds gauge") != std::string::npos);
  for (const char* loop : {"chp", "dafka", "tower"}) {
    std::smatch m;
    std::regex sample("zstore_loop_heartbeat_age_seconds\\{loop=\"" + std::string(loop) + "\"\\} ([0-9.e+-]+)");
    BOOST_REQUIRE_MESSAGE(std::regex_search(metrics, m, sample), loop << " loop has no age sample:\n" << metrics);
    double age = std::stod(m[1]);
    BOOST_TEST(age >= 0.0);
    BOOST_TEST(age < 5.0);
  }
}
