// ChpFollower against a scripted leader (ROUTER + PUB on loopback): what
// the passive still holds as pending once its snapshot is loaded.
#include "server/chp_follower.h"

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <zmq.hpp>

#include "protocol/chp_codec.h"
#include "server/zmq_frames.h"
#include "storage/chp_store.h"
#include "tests/support/test_support.h"

namespace chp = zstore::protocol::chp;
using namespace std::chrono_literals;
using zstore::server::ChpFollower;
using zstore::server::PendingList;
using zstore::server::ReceivedMessage;

namespace {

zstore::storage::ChpWrite kvset(const std::string& key, const std::string& uuid, const std::string& value) {
  zstore::storage::ChpWrite w;
  w.key = key;
  w.uuid = uuid;
  w.value = value;
  return w;
}

}  // namespace

// The active applied and published a delete of "k" before it served our
// snapshot, but its KVPUB went out before our subscription was in place:
// the delete, received on our collector after we asked for the snapshot,
// matches nothing in it. Kept as pending, it would delete "k" again at
// takeover, after any newer value. Once the snapshot is loaded nothing
// received before is pending.
BOOST_AUTO_TEST_CASE(nothing_received_before_the_snapshot_completed_stays_pending) {
  zstore::testing::TempDir dir;
  std::unique_ptr<zstore::storage::Database> db;
  BOOST_REQUIRE(zstore::storage::Database::Open(dir.str(), {}, &db).ok());
  std::unique_ptr<zstore::storage::ChpStore> store;
  BOOST_REQUIRE(zstore::storage::ChpStore::Open(db.get(), &store).ok());

  zmq::context_t ctx;
  std::uint16_t port = zstore::testing::free_port_range(2);
  zmq::socket_t router(ctx, zmq::socket_type::router);
  router.bind("tcp://127.0.0.1:" + std::to_string(port));
  zmq::socket_t pub(ctx, zmq::socket_type::pub);
  pub.bind("tcp://127.0.0.1:" + std::to_string(port + 1));

  PendingList pending;
  ChpFollower follower(ctx, *store, pending, "tcp://127.0.0.1:" + std::to_string(port), {}, [] { return 0; });
  follower.start();
  pending.add(kvset("k", std::string(16, '\x01'), ""));   // the delete, after our request
  pending.add(kvset("j", std::string(16, '\x02'), "old"));  // overwritten in the leader since

  ReceivedMessage request;
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!zstore::server::try_recv(router, &request)) {
    BOOST_REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(5ms);
  }
  std::string identity(request.views[0]);
  (void)zstore::server::try_send(router, chp::encode_kvmsg({"j", 7, std::string(16, '\x03'), "", "new"}), identity);
  (void)zstore::server::try_send(router, chp::encode_kthxbai({9, "", {}}), identity);

  while (!follower.following()) {
    BOOST_REQUIRE(std::chrono::steady_clock::now() < deadline);
    zmq::pollitem_t item{follower.snapshot_socket().handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(50));
    follower.on_snapshot_socket();
  }
  BOOST_CHECK_EQUAL(store->last_sequence(), 9u);
  BOOST_CHECK_EQUAL(pending.size(), 0u);

  // Updates received from here on are kept until the active republishes them.
  pending.add(kvset("m", std::string(16, '\x04'), "later"));
  BOOST_CHECK_EQUAL(pending.size(), 1u);
}
