// /healthz role and zstore_ha_state of a Binary Star pair of real zstored
// processes: primary/backup until a client votes, then active/passive;
// both healthy. Idle reactors (a pair's, a standalone server's CHP and
// Dafka loops) sleep between their timers.
#include <boost/test/unit_test.hpp>

#include <thread>

#include <nlohmann/json.hpp>

#include "tests/ops/ops_support.h"
#include "tests/support/chp_peer.h"

using namespace zstore::testing;
using namespace std::chrono_literals;

namespace {

std::string role(std::uint16_t http_port) {
  HttpReply r = http_request(http_port, "GET", "/healthz");
  if (r.status != 200) return "http " + std::to_string(r.status);
  return nlohmann::json::parse(r.body)["role"].get<std::string>();
}

// A client's snapshot request is the vote that makes the primary active:
// asks until it answers.
void vote_for(HttpZstored& primary) {
  zmq::context_t ctx;
  BOOST_REQUIRE(wait_until(
      [&] {
        ChpPeer voter(ctx, "tcp://127.0.0.1", primary.server.chp_port());
        return voter.snapshot("", 300ms).has_value();
      },
      15s));
}

}  // namespace

BOOST_AUTO_TEST_CASE(healthz_reports_the_binary_star_role) {
  HttpZstored primary, backup;
  zstore::testing::make_ha_pair(primary.server, backup.server, {"--ha-heartbeat-ms", "200"});
  BOOST_REQUIRE_MESSAGE(primary.server.start(), primary.server.log());
  BOOST_TEST(role(primary.http_port) == "primary");
  BOOST_REQUIRE_MESSAGE(backup.server.start(), backup.server.log());

  vote_for(primary);
  BOOST_TEST(wait_until([&] { return role(primary.http_port) == "active"; }, 10s), role(primary.http_port));
  BOOST_TEST(wait_until([&] { return role(backup.http_port) == "passive"; }, 10s), role(backup.http_port));
  BOOST_TEST(metric(primary.metrics(), "zstore_ha_state{state=\"active\"}") == 1.0);
  auto b = backup.metrics();
  BOOST_TEST(metric(b, "zstore_ha_state{state=\"passive\"}") == 1.0);
  BOOST_TEST(metric(b, "zstore_ha_state{state=\"standalone\"}") == 0.0);
}

// An idle pair sleeps between its timers: a passive once spun (its HUGZ and
// expiry timers, which only an active moves on, were always due), using a
// whole core and starving its active on a small machine.
BOOST_AUTO_TEST_CASE(an_idle_pair_does_not_spin) {
  HttpZstored primary, backup;
  zstore::testing::make_ha_pair(primary.server, backup.server, {"--ha-heartbeat-ms", "200"});
  BOOST_REQUIRE_MESSAGE(primary.server.start(), primary.server.log());
  BOOST_REQUIRE_MESSAGE(backup.server.start(), backup.server.log());
  vote_for(primary);
  BOOST_REQUIRE(wait_until([&] { return backup.server.log().find("HA follower: synced") != std::string::npos; }, 15s));
  const char* turns = "zstore_chp_loop_turns_total";
  double p0 = metric(primary.metrics(), turns), b0 = metric(backup.metrics(), turns);
  std::this_thread::sleep_for(2s);  // the window measured, not a wait for a condition
  double p1 = metric(primary.metrics(), turns), b1 = metric(backup.metrics(), turns);
  // Expected: a turn per HA beat sent or received (5 + 5 a second), HUGZ,
  // scrapes; a spinning loop makes thousands.
  BOOST_TEST(p1 - p0 < 200.0, "active: " << p1 - p0 << " turns in 2 s");
  BOOST_TEST(b1 - b0 < 200.0, "passive: " << b1 - b0 << " turns in 2 s");
  BOOST_TEST(b1 > 0.0);
}

BOOST_AUTO_TEST_CASE(an_idle_standalone_server_does_not_spin) {
  std::uint16_t tower = free_port_range(3);
  HttpZstored z({"--tower-port", std::to_string(tower), "--dafka-port", std::to_string(tower + 2)});
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  auto turns = [&] {
    auto m = z.metrics();
    return std::pair{metric(m, "zstore_chp_loop_turns_total"), metric(m, "zstore_dafka_loop_turns_total")};
  };
  auto [c0, d0] = turns();
  std::this_thread::sleep_for(2s);  // the window measured
  auto [c1, d1] = turns();
  // Expected: expiry sweeps (10 a second), HUGZ, beacons; thousands if a
  // timer's last millisecond is waited as 0 ms.
  BOOST_TEST(c1 - c0 < 200.0, "CHP: " << c1 - c0 << " turns in 2 s");
  BOOST_TEST(d1 - d0 < 200.0, "Dafka: " << d1 - d0 << " turns in 2 s");
  BOOST_TEST(c1 > 0.0);  // the counters exist and count (a loop may not have turned before the first read)
  BOOST_TEST(d1 > 0.0);
}
