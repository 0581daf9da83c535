// --max-batch-bytes bounds what one loop turn reads into a write batch: with
// a budget below one message, every CHP update is its own batch, however
// many arrive together (zstore_chp_batches_total).
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>

#include <zmq.hpp>

#include "tests/ops/ops_support.h"
#include "tests/support/chp_peer.h"

using namespace std::chrono_literals;
using zstore::testing::ChpPeer;
using zstore::testing::HttpZstored;
using zstore::testing::metric;

BOOST_AUTO_TEST_CASE(a_budget_below_one_message_commits_every_update_alone) {
  HttpZstored z({"--max-batch-bytes", "1", "--dafka-port", "0", "--tower-port", "0"});
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  zmq::context_t ctx;
  ChpPeer peer(ctx, "tcp://127.0.0.1", z.server.chp_port());
  BOOST_REQUIRE(peer.wait_connected());
  // The counters move after the publish, and the connect probe's may still
  // be on its way: compare batches with updates over the same window.
  auto m = z.metrics();
  const double batches_before = metric(m, "zstore_chp_batches_total");
  const double updates_before = metric(m, "zstore_chp_updates_applied_total");
  const int n = 200;  // one burst: without the budget, turns take many at once
  for (int i = 0; i < n; ++i) peer.set("batch/k" + std::to_string(i), std::string(100, 'v'));
  BOOST_REQUIRE(peer.wait_kvpub("batch/k" + std::to_string(n - 1), 20s));
  BOOST_REQUIRE(zstore::testing::wait_until(
      [&] { return metric(m = z.metrics(), "zstore_chp_updates_applied_total") - updates_before >= n; }, 10s));
  const double updates = metric(m, "zstore_chp_updates_applied_total") - updates_before;
  BOOST_TEST(updates <= n + 1);  // this burst and at most the probe
  BOOST_TEST(metric(m, "zstore_chp_batches_total") - batches_before == updates);
}
