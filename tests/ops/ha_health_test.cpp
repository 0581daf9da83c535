// /healthz role and zstore_ha_state of a Binary Star pair of real zstored
// processes: primary/backup until a client votes, then active/passive;
// both healthy.
#include <boost/test/unit_test.hpp>

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

}  // namespace

BOOST_AUTO_TEST_CASE(healthz_reports_the_binary_star_role) {
  HttpZstored primary, backup;
  zstore::testing::make_ha_pair(primary.server, backup.server, {"--ha-heartbeat-ms", "200"});
  BOOST_REQUIRE_MESSAGE(primary.server.start(), primary.server.log());
  BOOST_TEST(role(primary.http_port) == "primary");
  BOOST_REQUIRE_MESSAGE(backup.server.start(), backup.server.log());

  // A client's snapshot request is the vote that makes the primary active.
  zmq::context_t ctx;
  BOOST_REQUIRE(wait_until(
      [&] {
        ChpPeer voter(ctx, "tcp://127.0.0.1", primary.server.chp_port());
        return voter.snapshot("", 300ms).has_value();
      },
      15s));
  BOOST_TEST(wait_until([&] { return role(primary.http_port) == "active"; }, 10s), role(primary.http_port));
  BOOST_TEST(wait_until([&] { return role(backup.http_port) == "passive"; }, 10s), role(backup.http_port));
  BOOST_TEST(metric(primary.metrics(), "zstore_ha_state{state=\"active\"}") == 1.0);
  auto b = backup.metrics();
  BOOST_TEST(metric(b, "zstore_ha_state{state=\"passive\"}") == 1.0);
  BOOST_TEST(metric(b, "zstore_ha_state{state=\"standalone\"}") == 0.0);
}
