// IoBatching: a context's I/O threads are SCHED_BATCH exactly while some
// vote is set, other contexts' threads are left alone, and a ChpServer
// votes only while a snapshot streams.
#include "server/io_batching.h"

#include <sched.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "protocol/chp_codec.h"
#include "server/chp_server.h"
#include "storage/chp_store.h"
#include "storage/database.h"
#include "tests/support/test_support.h"

using zstore::server::IoBatching;
using namespace std::chrono_literals;
namespace chp = zstore::protocol::chp;

namespace {

// The thread of this process named exactly `name`; 0 while there is none.
pid_t thread_named(const std::string& name) {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string line;
    if (std::getline(comm, line) && line == name) return static_cast<pid_t>(std::stol(task.path().filename()));
  }
  return 0;
}

// A context with its IoBatching, its I/O thread started (by a socket) and found.
struct Context {
  zmq::context_t ctx;
  IoBatching batching{ctx};
  zmq::socket_t socket{ctx, zmq::socket_type::pub};
  pid_t io = 0;
  Context() {
    BOOST_REQUIRE(zstore::testing::wait_until([&] { return (io = thread_named(batching.io_thread_prefix() + "0")) != 0; }));
  }
  int policy() const { return sched_getscheduler(io); }
};

}  // namespace

BOOST_AUTO_TEST_CASE(io_threads_batch_while_any_vote_is_set) {
  Context c;
  BOOST_TEST(c.policy() == SCHED_OTHER);
  IoBatching::Vote a(&c.batching);
  IoBatching::Vote b(&c.batching);
  a.set(true);
  BOOST_TEST(c.policy() == SCHED_BATCH);
  BOOST_TEST(c.batching.batching());
  b.set(true);
  a.set(true);  // the same vote twice counts once
  a.set(false);
  BOOST_TEST(c.policy() == SCHED_BATCH);  // b still streams
  b.set(false);
  BOOST_TEST(c.policy() == SCHED_OTHER);
  BOOST_TEST(!c.batching.batching());
  a.set(false);  // already off: still no vote
  b.set(true);
  BOOST_TEST(c.policy() == SCHED_BATCH);
}

BOOST_AUTO_TEST_CASE(a_vote_ends_with_its_owner) {
  Context c;
  {
    IoBatching::Vote v(&c.batching);
    v.set(true);
    BOOST_TEST(c.policy() == SCHED_BATCH);
  }
  BOOST_TEST(c.policy() == SCHED_OTHER);
  IoBatching::Vote none(nullptr);
  none.set(true);  // no IoBatching: nothing happens
  none.set(false);
}

BOOST_AUTO_TEST_CASE(other_contexts_keep_their_scheduling) {
  Context one;
  Context two;
  BOOST_TEST(one.batching.io_thread_prefix() != two.batching.io_thread_prefix());
  IoBatching::Vote v(&one.batching);
  v.set(true);
  BOOST_TEST(one.policy() == SCHED_BATCH);
  BOOST_TEST(two.policy() == SCHED_OTHER);
}

// A real ChpServer: batching from the moment a snapshot streams (its
// client reads nothing, so it stays open) until it ends.
BOOST_AUTO_TEST_CASE(chp_server_batches_while_a_snapshot_streams) {
  zstore::testing::TempDir dir;
  std::unique_ptr<zstore::storage::Database> db;
  BOOST_REQUIRE(zstore::storage::Database::Open(dir.str(), {}, &db).ok());
  std::unique_ptr<zstore::storage::ChpStore> store;
  BOOST_REQUIRE(zstore::storage::ChpStore::Open(db.get(), &store).ok());
  constexpr std::size_t kKeys = 50000;  // 12 MB: more than the pipes and socket buffers hold
  std::vector<zstore::storage::ChpWrite> writes(kKeys);
  for (std::size_t i = 0; i < kKeys; ++i) {
    writes[i].key = "k/" + std::to_string(i);
    writes[i].value.assign(240, 'v');
  }
  BOOST_REQUIRE(store->apply(writes).ok());

  Context c;
  zstore::server::ChpMetrics metrics;
  zstore::server::ChpServerConfig config;
  config.port = zstore::testing::free_port_range(3);
  config.io_batching = &c.batching;
  zstore::server::ChpServer server(c.ctx, *store, config, metrics);
  server.start();
  BOOST_TEST(c.policy() == SCHED_OTHER);

  zmq::socket_t client(c.ctx, zmq::socket_type::dealer);
  client.set(zmq::sockopt::rcvhwm, 10);
  client.set(zmq::sockopt::rcvbuf, 4096);
  client.connect("tcp://127.0.0.1:" + std::to_string(config.port));
  auto request = chp::encode_icanhaz({"", std::nullopt});
  for (std::size_t i = 0; i < request.size(); ++i) {
    client.send(zmq::buffer(request[i]), i + 1 < request.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
  BOOST_TEST_REQUIRE(zstore::testing::wait_until([&] { return c.batching.batching(); }));
  BOOST_TEST(c.policy() == SCHED_BATCH);

  std::size_t keys = 0;
  bool done = false;
  auto deadline = std::chrono::steady_clock::now() + zstore::testing::scaled(60s);
  while (!done && std::chrono::steady_clock::now() < deadline) {
    zmq::message_t first;
    if (!client.recv(first, zmq::recv_flags::dontwait)) {
      zmq::pollitem_t item{client.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, 100ms);
      continue;
    }
    done = first.to_string_view() == chp::kKthxbai;
    keys += done ? 0 : 1;
    for (bool more = first.more(); more;) {
      zmq::message_t part;
      (void)client.recv(part);
      more = part.more();
    }
  }
  BOOST_TEST_REQUIRE(done);
  BOOST_TEST(keys == kKeys);
  BOOST_TEST(zstore::testing::wait_until([&] { return !c.batching.batching(); }));
  BOOST_TEST(c.policy() == SCHED_OTHER);
  server.stop();
  store.reset();
  BOOST_TEST(db->close().ok());
}
