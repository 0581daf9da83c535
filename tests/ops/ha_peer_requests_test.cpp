// The HA pair's requests on the CHP snapshot port (PEERSNAPSHOT?, CATCHUP?,
// RECONCILE?) are served only to the configured peer: a plain client's, a
// client's whose connection forges a pair routing id, a CURVE client's of
// the allow list, and any on a standalone server are refused (no answer,
// so no priority session either) and counted in
// zstore_chp_peer_requests_refused_total; the real pair still syncs.
#include <boost/test/unit_test.hpp>

#include <string>

#include <zmq.hpp>

#include "protocol/byte_order.h"
#include "protocol/chp_codec.h"
#include "tests/ops/ops_support.h"
#include "tests/support/curve_keys.h"
#include "tests/support/chp_peer.h"
#include "tests/support/zstored_fixtures.h"

using namespace zstore::testing;
using namespace std::chrono_literals;
namespace chp = zstore::protocol::chp;

namespace {

double refused(HttpZstored& z) { return metric(z.metrics(), "zstore_chp_peer_requests_refused_total"); }

// A request on a DEALER named like a member's follower, with a made-up token.
void send_forged(zmq::context_t& ctx, const Zstored& server, const std::string& command, const std::string& arg) {
  zmq::socket_t dealer(ctx, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 1000);
  dealer.set(zmq::sockopt::routing_id, "zstore-pair:" + std::string(32, '0') + ":1");
  dealer.connect(server.chp_endpoint());
  zmq::message_t first(command.data(), command.size());
  dealer.send(first, zmq::send_flags::sndmore);
  zmq::message_t second(arg.data(), arg.size());
  dealer.send(second, zmq::send_flags::none);
}

std::string sequence_frame(std::uint64_t s) {
  std::string be;
  zstore::protocol::put_be<std::uint64_t>(be, s);
  return be;
}

}  // namespace

BOOST_AUTO_TEST_CASE(only_the_peer_gets_answers_to_pair_requests) {
  HttpZstored primary, backup;
  make_ha_pair(primary.server, backup.server, {"--ha-heartbeat-ms", "200", "--hugz-interval-ms", "200"});
  BOOST_REQUIRE_MESSAGE(primary.server.start(), primary.server.log());
  BOOST_REQUIRE_MESSAGE(backup.server.start(), backup.server.log());
  zmq::context_t ctx;
  BOOST_REQUIRE_MESSAGE(snapshot_from(ctx, primary.server, 15s), "the primary did not become active");
  BOOST_REQUIRE_MESSAGE(wait_until([&] { return backup.server.ha_follower_synced(); }, 15s),
                        "the backup did not sync: " + backup.server.log());

  ChpPeer plain(ctx, "tcp://127.0.0.1", primary.server.chp_port());
  BOOST_REQUIRE(plain.wait_connected());
  BOOST_TEST(!plain.peer_snapshot(1s).has_value());
  BOOST_TEST(!plain.catch_up(0, 1s).has_value());
  send_forged(ctx, primary.server, std::string(chp::kPeerSnapshot), "");
  BOOST_TEST(wait_until([&] { return refused(primary) == 3.0; }, 10s), refused(primary));
  // The passive's RECONCILE? comes from the active only.
  send_forged(ctx, backup.server, "RECONCILE?", sequence_frame(0));
  ChpPeer to_backup(ctx, "tcp://127.0.0.1", backup.server.chp_port());
  to_backup.send_snapshot_port({"RECONCILE?", sequence_frame(0)});
  BOOST_TEST(wait_until([&] { return refused(backup) == 2.0; }, 10s), refused(backup));
  BOOST_TEST(primary.server.log().find("refused PEERSNAPSHOT? from 127.0.0.1: only the HA peer may send it") !=
             std::string::npos);

  // The real pair's own requests were not refused: the backup follows.
  plain.set("/after", "1");
  BOOST_REQUIRE(plain.wait_kvpub("/after", 5s));
  BOOST_TEST(refused(primary) == 3.0);
  BOOST_TEST(refused(backup) == 2.0);
}

BOOST_AUTO_TEST_CASE(a_standalone_server_answers_no_pair_request) {
  HttpZstored z;
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  zmq::context_t ctx;
  ChpPeer p(ctx, "tcp://127.0.0.1", z.server.chp_port());
  BOOST_REQUIRE(p.wait_connected());
  BOOST_TEST(!p.peer_snapshot(1s).has_value());
  BOOST_TEST(!p.catch_up(0, 1s).has_value());
  BOOST_TEST(wait_until([&] { return refused(z) == 2.0; }, 10s), refused(z));
  BOOST_TEST(p.snapshot("", 5s).has_value());  // a client's own request is served
}

// Under CURVE without --acl, an allowed client is still not the peer: only
// the server's own key (the pair's shared certificate) is.
BOOST_AUTO_TEST_CASE(under_curve_only_the_servers_key_is_the_peer) {
  CurveKeys keys({"alice"}, {"alice"});
  HttpZstored z(keys.server_args());
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  zmq::context_t ctx;
  ChpPeer alice(ctx, "tcp://127.0.0.1", z.server.chp_port(), keys.as("alice"));
  BOOST_REQUIRE(alice.wait_connected());
  BOOST_TEST(!alice.catch_up(0, 1s).has_value());
  BOOST_TEST(wait_until([&] { return refused(z) == 1.0; }, 10s), refused(z));
  ChpPeer member(ctx, "tcp://127.0.0.1", z.server.chp_port(), {keys.server, keys.server.public_key});
  BOOST_REQUIRE(member.wait_connected());
  BOOST_TEST(member.catch_up(0, 5s).has_value());
  BOOST_TEST(refused(z) == 1.0);
}
