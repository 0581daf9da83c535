// The disk watermark in the real binary: with --min-free-bytes above the
// free space, CHP updates are refused (not published), /healthz says
// degraded, /metrics says refused, snapshots are still served.
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "client/dafka_producer.h"
#include "tests/ops/ops_support.h"
#include "tests/support/chp_peer.h"

using namespace zstore::testing;
using namespace std::chrono_literals;
namespace dafka = zstore::client::dafka;

BOOST_AUTO_TEST_CASE(below_the_watermark_writes_are_refused_and_reads_go_on) {
  HttpZstored z({"--min-free-bytes", "1000000000000000000"});  // 1 EB: more than any disk here
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  zmq::context_t ctx;
  ChpPeer peer(ctx, "tcp://127.0.0.1", z.server.chp_port());
  // (no wait_connected(): it waits for a published write)

  auto health = http_request(z.http_port, "GET", "/healthz");
  BOOST_TEST(health.status == 200);
  auto body = nlohmann::json::parse(health.body);
  BOOST_TEST(body["status"] == "degraded");
  BOOST_TEST(body["disk"]["state"] == "low: writes refused");
  BOOST_TEST(body["disk"]["min_free_bytes"] == 1000000000000000000ull);

  BOOST_REQUIRE(wait_until([&] {
    peer.set("disk/k", "v");
    return metric(z.metrics(), "zstore_chp_write_failures_total") >= 1.0;
  }));
  auto m = z.metrics();
  BOOST_TEST(metric(m, "zstore_disk_writes_refused") == 1.0);
  BOOST_TEST(metric(m, "zstore_disk_low_total") == 1.0);
  BOOST_TEST(metric(m, "zstore_disk_free_bytes") > 0.0);
  BOOST_TEST(metric(m, "zstore_chp_updates_applied_total") == 0.0);
  auto snap = peer.snapshot();  // reads go on
  BOOST_REQUIRE(snap);
  BOOST_TEST(snap->entries.empty());
  BOOST_TEST(z.server.log().find("disk almost full") != std::string::npos, z.server.log());
  BOOST_TEST(z.server.log().find("below --min-free-bytes 1000000000000000000") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(below_the_watermark_dafka_records_are_not_acked) {
  std::uint16_t tower = free_port_range(3);
  HttpZstored z({"--min-free-bytes", "1000000000000000000", "--tower-port", std::to_string(tower), "--dafka-port",
                 std::to_string(tower + 2), "--beacon-interval-ms", "100"});
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  dafka::ProducerOptions o;
  o.node.towers = {"tcp://127.0.0.1:" + std::to_string(tower)};
  o.node.beacon_interval = 100ms;
  o.head_interval = 200ms;
  dafka::Producer producer(o);
  BOOST_REQUIRE(producer.wait_connected(15s));
  producer.publish("full", "record");
  BOOST_REQUIRE(wait_until([&] { return metric(z.metrics(), "zstore_dafka_write_failures_total") >= 1.0; }));
  BOOST_TEST(!producer.flush(200ms));  // no ACK
  BOOST_TEST(metric(z.metrics(), "zstore_dafka_records_stored_total") == 0.0);
}

BOOST_AUTO_TEST_CASE(a_zero_watermark_turns_the_check_off) {
  HttpZstored z({"--min-free-bytes", "0"});
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  BOOST_TEST(z.metrics().count("zstore_disk_writes_refused") == 0u);
  auto body = nlohmann::json::parse(http_request(z.http_port, "GET", "/healthz").body);
  BOOST_TEST(body["status"] == "ok");
  BOOST_TEST(!body.contains("disk"));
}

// ctest gives every test ZSTORE_MIN_FREE_BYTES (cmake/ZstoreTargets.cmake),
// so the zstoreds tests start do not refuse writes on a CI disk with less
// than the 1 GiB default free; the server takes the watermark from it.
BOOST_AUTO_TEST_CASE(tests_run_with_the_watermark_from_the_environment) {
  const char* env = std::getenv("ZSTORE_MIN_FREE_BYTES");
  BOOST_REQUIRE_MESSAGE(env != nullptr, "ctest did not set ZSTORE_MIN_FREE_BYTES");
  BOOST_TEST(std::stoull(env) < (1ull << 30));
  HttpZstored z;
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  auto body = nlohmann::json::parse(http_request(z.http_port, "GET", "/healthz").body);
  BOOST_TEST(body["disk"]["min_free_bytes"] == std::stoull(env));
  zmq::context_t ctx;
  ChpPeer peer(ctx, "tcp://127.0.0.1", z.server.chp_port());
  BOOST_TEST(peer.wait_connected());  // writes are published, not refused
}
