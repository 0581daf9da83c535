// SIGTERM with the HTTP side on and clients connected (a CHP peer streaming
// KVSETs, an idle HTTP keep-alive connection, a Dafka producer): zstored
// exits 0 within 5 s, and every update it published is on disk after.
#include <boost/test/unit_test.hpp>

#include <httplib.h>

#include <csignal>

#include "client/dafka_producer.h"
#include "tests/ops/ops_support.h"
#include "tests/support/chp_peer.h"

using namespace zstore::testing;
using namespace std::chrono_literals;
namespace dafka = zstore::client::dafka;

BOOST_AUTO_TEST_CASE(sigterm_with_clients_connected_exits_0_within_5s) {
  std::uint16_t tower = free_port_range(3);
  HttpZstored z({"--tower-port", std::to_string(tower), "--dafka-port", std::to_string(tower + 2),
                 "--beacon-interval-ms", "100"});
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  zmq::context_t ctx;
  ChpPeer peer(ctx, "tcp://127.0.0.1", z.server.chp_port());
  BOOST_REQUIRE(peer.wait_connected());

  httplib::Client keep_alive("127.0.0.1", z.http_port);
  keep_alive.set_keep_alive(true);
  auto r = keep_alive.Get("/healthz");
  BOOST_REQUIRE(r);
  BOOST_REQUIRE_EQUAL(r->status, 200);
  BOOST_TEST(r->body.find("\"tower\":{\"last_turn_ms_ago\"") != std::string::npos, r->body);

  dafka::ProducerOptions o;
  o.node.towers = {"tcp://127.0.0.1:" + std::to_string(tower)};
  o.node.beacon_interval = 100ms;
  dafka::Producer producer(o);
  BOOST_REQUIRE(producer.wait_connected(15s));
  producer.publish("t", "before the signal");
  BOOST_REQUIRE(producer.flush(15s));

  // Updates in flight while the signal arrives.
  for (int i = 0; i < 2000; ++i) peer.set("flight/" + std::to_string(i), "v");
  auto first = peer.wait_kvpub("flight/0", 10s);
  BOOST_REQUIRE(first);
  auto sent = std::chrono::steady_clock::now();
  z.server.kill(SIGTERM);
  int rc = z.server.wait_exit(10s);
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - sent);
  BOOST_TEST(rc == 0, z.server.log());
  BOOST_TEST(took.count() < 5000, "exit took " << took.count() << " ms");
  BOOST_TEST(z.server.log().find("zstored stopped cleanly") != std::string::npos);
  BOOST_TEST_MESSAGE("SIGTERM to exit: " << took.count() << " ms");
  std::uint64_t last_seen = first->sequence;  // every KVPUB the server sent before it stopped
  while (auto u = peer.next_update(200ms)) {
    if (auto* kv = std::get_if<zstore::protocol::chp::KvMsg>(&*u)) last_seen = std::max(last_seen, kv->sequence);
  }

  // Restarted on the same data: nothing published was lost.
  BOOST_REQUIRE_MESSAGE(z.server.restart(), z.server.log());
  auto m = z.metrics();
  BOOST_TEST(metric(m, "zstore_chp_last_sequence") >= double(last_seen));
  BOOST_TEST(metric(m, "zstore_dafka_partitions") == 1.0);
}
