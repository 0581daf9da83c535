// A read replica's HTTP side against real zstored processes: /healthz is
// ok while it follows, degraded (status 200, replica.upstream "stale")
// once its upstream has been SIGKILLed for longer than --replica-stale-ms,
// and ok again once the upstream is back; and a resume the upstream
// declines costs it one snapshot, not two (its snapshot_keys_sent).
#include <signal.h>

#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include "tests/ops/ops_support.h"
#include "tests/support/chp_peer.h"
#include "tests/support/zstored_fixtures.h"

using namespace zstore::testing;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> replica_of(const Zstored& upstream, std::vector<std::string> more = {}) {
  std::vector<std::string> args = {"--replica-of", upstream.chp_endpoint(), "--hugz-interval-ms",
                                   "200",          "--replica-silence-ms",  "500"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// /healthz parsed, with its HTTP status; a null body when it did not answer.
std::pair<int, nlohmann::json> healthz(std::uint16_t port) {
  HttpReply r = http_request(port, "GET", "/healthz");
  if (r.status == 0) return {0, nlohmann::json()};
  return {r.status, nlohmann::json::parse(r.body)};
}

// Waits until /healthz answers 200 with this status and replica.upstream;
// the last body is the message when it does not.
void expect_health(std::uint16_t port, const std::string& status, const std::string& upstream) {
  std::string last;
  bool seen = wait_until(
      [&] {
        auto [code, body] = healthz(port);
        last = std::to_string(code) + " " + body.dump();
        return code == 200 && body["status"] == status && body["role"] == "replica" &&
               body["replica"]["upstream"] == upstream;
      },
      30s);
  BOOST_TEST(seen, "want " + status + "/" + upstream + ", last /healthz: " + last);
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

BOOST_AUTO_TEST_CASE(healthz_of_a_replica_is_degraded_while_its_upstream_is_dead_and_ok_once_it_is_back) {
  Zstored top({"--hugz-interval-ms", "200"});
  HttpZstored replica(replica_of(top, {"--replica-stale-ms", "1000"}));
  BOOST_REQUIRE_MESSAGE(top.start(), top.log());
  BOOST_REQUIRE_MESSAGE(replica.server.start(), replica.server.log());
  zmq::context_t ctx;
  ChpPeer writer(ctx, "tcp://127.0.0.1", top.chp_port());
  BOOST_REQUIRE(writer.wait_connected());
  writer.set("health/key", "v");
  BOOST_REQUIRE(writer.wait_kvpub("health/key", 10s));
  expect_health(replica.http_port, "ok", "ok");

  top.kill(SIGKILL);
  top.wait_exit();
  expect_health(replica.http_port, "degraded", "stale");
  auto [code, body] = healthz(replica.http_port);
  BOOST_TEST(code == 200);  // the map it serves is complete, only old
  BOOST_TEST(body["replica"]["upstream_silent_ms"].get<std::int64_t>() > 1000);

  BOOST_REQUIRE_MESSAGE(top.restart(), top.log());
  expect_health(replica.http_port, "ok", "ok");
}

// The upstream keeps 10 updates of history; the replica is away for 100:
// its resume is declined and answered with the map, which it loads. The
// upstream sends the map once (before, the replica dropped it and asked
// for it again).
BOOST_AUTO_TEST_CASE(a_resume_the_upstream_declines_costs_it_one_snapshot) {
  HttpZstored top({"--hugz-interval-ms", "200", "--chp-history", "10"});
  Zstored replica(replica_of(top.server));
  BOOST_REQUIRE_MESSAGE(top.server.start(), top.server.log());
  zmq::context_t ctx;
  ChpPeer writer(ctx, "tcp://127.0.0.1", top.server.chp_port());
  BOOST_REQUIRE(writer.wait_connected());
  const int keys = 200;
  for (int i = 0; i < keys; ++i) writer.set("k" + std::to_string(i), "a");
  BOOST_REQUIRE(writer.wait_kvpub("k" + std::to_string(keys - 1), 10s));
  BOOST_REQUIRE_MESSAGE(replica.start(), replica.log());
  BOOST_REQUIRE(wait_until([&] { return replica.log().find("replica: synced from") != std::string::npos; }, 20s));

  replica.kill(SIGKILL);
  replica.wait_exit();
  for (int i = 0; i < 100; ++i) writer.set("k" + std::to_string(i), "b");
  BOOST_REQUIRE(writer.wait_kvpub("k99", 10s));
  double sent_before = metric(top.metrics(), "zstore_chp_snapshot_keys_sent_total");
  double declined_before = metric(top.metrics(), "zstore_chp_resumes_declined_total");
  BOOST_REQUIRE_MESSAGE(replica.restart(), replica.log());
  BOOST_REQUIRE(wait_until([&] { return count(replica.log(), "replica: synced from") == 2; }, 20s));
  BOOST_TEST(replica.log().find("declined our resume") != std::string::npos, replica.log());
  auto m = top.metrics();
  BOOST_TEST(metric(m, "zstore_chp_resumes_declined_total") == declined_before + 1);
  double sent = metric(m, "zstore_chp_snapshot_keys_sent_total") - sent_before;
  // The map once: its keys (ours and the connection probes' of wait_connected).
  BOOST_TEST(metric(m, "zstore_chp_keys") >= double(keys));
  BOOST_TEST(sent == metric(m, "zstore_chp_keys"), "keys the upstream sent for the replica's restart: " << sent);

  auto want = snapshot_from(ctx, top.server, 5s);
  auto got = snapshot_from(ctx, replica, 5s);
  BOOST_REQUIRE(want && got);
  BOOST_TEST(got->sequence == want->sequence);
  BOOST_REQUIRE_EQUAL(got->entries.size(), want->entries.size());
  for (const auto& [key, kv] : want->entries) BOOST_TEST(got->entries.at(key).body == kv.body, key);
}
