#include "tests/support/zstored_fixtures.h"

#include <boost/test/unit_test.hpp>

#include "tools/harness/harness.h"

namespace zstore::testing {

using namespace std::chrono_literals;

ZstoredServer::ZstoredServer(std::vector<std::string> extra) : zstored(std::move(extra)) {
  BOOST_REQUIRE_MESSAGE(zstored.start(), "zstored did not start: " + zstored.log());
}

std::unique_ptr<ChpPeer> ZstoredServer::peer() {
  auto p = std::make_unique<ChpPeer>(ctx, "tcp://127.0.0.1", zstored.chp_port());
  BOOST_REQUIRE(p->wait_connected());
  return p;
}

std::optional<ChpSnapshot> snapshot_from(zmq::context_t& ctx, const Zstored& server,
                                         std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + scaled(timeout);
  while (std::chrono::steady_clock::now() < deadline) {
    ChpPeer peer(ctx, "tcp://127.0.0.1", server.chp_port());
    if (auto snap = peer.snapshot("", 300ms)) return snap;
  }
  return std::nullopt;
}

HaPair::HaPair(const std::vector<std::string>& common) {
  make_ha_pair(primary, backup, {"--ha-heartbeat-ms", "200", "--hugz-interval-ms", "200"});
  primary.add_args(common);
  backup.add_args(common);
  BOOST_REQUIRE_MESSAGE(primary.start(), "primary did not start: " + primary.log());
  BOOST_REQUIRE_MESSAGE(backup.start(), "backup did not start: " + backup.log());
}

void HaPair::wait_active_and_synced() {
  BOOST_REQUIRE_MESSAGE(snapshot_from(primary, 10s), "the primary did not become active");
  BOOST_REQUIRE_MESSAGE(wait_until([&] { return backup.ha_follower_synced(); }), "the backup did not sync");
}

}  // namespace zstore::testing
