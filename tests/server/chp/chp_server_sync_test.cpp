// ChpServer under a WAL sync queue (ChpServerConfig::sync_wal, zstored's
// --sync always): an update is published only after the fsync that covers
// it returned, the loop keeps turning while that fsync runs, updates taken
// meanwhile follow in order, and a failed fsync publishes nothing and gives
// no sequence twice; a confirmed write (WRITE?) is answered only after its
// fsync, and after a failed one as unknown. The fsync is gated by the test.
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include <zmq.hpp>

#include "protocol/chp_writes.h"

#include "server/chp/chp_server.h"
#include "storage/chp/chp_store.h"
#include "storage/db/database.h"
#include "tests/support/chp_peer.h"
#include "tests/support/test_support.h"
#include "transport/zmq_frames.h"

using namespace std::chrono_literals;
using namespace zstore;
using testing::wait_until;

namespace {

// The database's own fsync, held while the test closes the gate; fails
// once when asked.
class Gate {
 public:
  explicit Gate(storage::Database* db) : db_(db) {}
  storage::Status sync() {
    std::unique_lock lock(mu_);
    ++calls_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return open_; });
    if (fail_next_) {
      fail_next_ = false;
      return storage::Status::IoError("injected fsync failure");
    }
    return db_->sync_wal();
  }
  void close() { set(false); }
  void open() { set(true); }
  void fail_next() {
    std::lock_guard lock(mu_);
    fail_next_ = true;
  }
  int calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  void set(bool open) {
    std::lock_guard lock(mu_);
    open_ = open;
    changed_.notify_all();
  }
  storage::Database* db_;
  std::mutex mu_;
  std::condition_variable changed_;
  bool open_ = true;
  bool fail_next_ = false;
  int calls_ = 0;
};

struct Fixture {
  testing::TempDir dir;
  std::unique_ptr<storage::Database> db;
  std::unique_ptr<storage::ChpStore> store;
  std::unique_ptr<Gate> gate;
  zmq::context_t ctx;
  server::ChpMetrics metrics;
  std::unique_ptr<server::ChpServer> server;
  std::uint16_t port = 0;

  Fixture() {
    storage::DatabaseOptions options;  // --sync always
    BOOST_REQUIRE(storage::Database::Open(dir.str(), options, &db).ok());
    BOOST_REQUIRE(storage::ChpStore::Open(db.get(), &store).ok());
    gate = std::make_unique<Gate>(db.get());
    server::ChpServerConfig config;
    port = testing::free_port_range(3);
    config.port = port;
    config.hugz_interval = 100ms;
    config.sync_wal = [g = gate.get()] { return g->sync(); };
    server = std::make_unique<server::ChpServer>(ctx, *store, config, metrics);
    server->start();
  }
  ~Fixture() {
    gate->open();
    server->stop();
  }
};

// A writer on the snapshot port: WRITE? out, WRITTEN back.
struct Writer {
  zmq::socket_t socket;
  Writer(zmq::context_t& ctx, std::uint16_t port) : socket(ctx, zmq::socket_type::dealer) {
    socket.set(zmq::sockopt::linger, 0);
    socket.connect("tcp://127.0.0.1:" + std::to_string(port));
  }
  void write(const std::string& key, const std::string& uuid) {
    zstore::transport::send(socket, protocol::chp::encode_write(key, uuid, "", "v", {}));
  }
  std::optional<protocol::chp::WriteOutcome> answer(std::chrono::milliseconds timeout) {
    zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, timeout) != 1) return std::nullopt;
    zstore::transport::Message msg;
    if (!zstore::transport::try_recv(socket, &msg)) return std::nullopt;
    auto outcome = protocol::chp::decode_written(msg.views);
    if (!outcome.ok()) return std::nullopt;
    return outcome.value();
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(chp_server_sync)

BOOST_AUTO_TEST_CASE(an_update_is_published_after_its_fsync_and_the_loop_turns_meanwhile) {
  Fixture f;
  testing::ChpPeer peer(f.ctx, "tcp://127.0.0.1", f.port);
  BOOST_REQUIRE(peer.wait_connected());
  // The counters move just after the publish: wait until a marker's is in,
  // and every earlier update's with it.
  peer.set("marker", "0");
  auto marker = peer.wait_kvpub("marker", 5s);
  BOOST_REQUIRE(marker);
  BOOST_REQUIRE(wait_until([&] { return f.metrics.last_sequence.load() == marker->sequence; }, 5s));
  f.gate->close();
  int calls = f.gate->calls();
  std::uint64_t applied = f.metrics.updates_applied.load();
  peer.set("a", "1");
  BOOST_REQUIRE(wait_until([&] { return f.gate->calls() > calls; }, 5s));  // written, its fsync asked
  std::uint64_t turns = f.metrics.loop_turns.load();
  peer.set("b", "2");  // taken and written while a's fsync is held
  BOOST_CHECK(!peer.wait_kvpub("a", 300ms));
  BOOST_CHECK_GT(f.metrics.loop_turns.load(), turns);            // the loop did not wait for the disk
  BOOST_CHECK_EQUAL(f.metrics.updates_applied.load(), applied);  // counted when published
  f.gate->open();
  auto a = peer.wait_kvpub("a", 5s);
  auto b = peer.wait_kvpub("b", 5s);
  BOOST_REQUIRE(a && b);
  BOOST_CHECK_EQUAL(b->sequence, a->sequence + 1);
}

BOOST_AUTO_TEST_CASE(a_failed_fsync_publishes_nothing_and_gives_no_sequence_twice) {
  Fixture f;
  testing::ChpPeer peer(f.ctx, "tcp://127.0.0.1", f.port);
  BOOST_REQUIRE(peer.wait_connected());
  peer.set("kept", "1");
  auto kept = peer.wait_kvpub("kept", 5s);
  BOOST_REQUIRE(kept);
  f.gate->fail_next();
  peer.set("lost", "2");
  BOOST_REQUIRE(wait_until([&] { return f.metrics.write_failures.load() > 0; }, 5s));
  BOOST_CHECK(!peer.wait_kvpub("lost", 300ms));
  std::optional<protocol::chp::KvMsg> after;
  BOOST_REQUIRE(wait_until(
      [&] {
        peer.set("after", "3");
        after = peer.wait_kvpub("after", 200ms);
        return after.has_value();
      },
      10s));
  BOOST_CHECK_GT(after->sequence, kept->sequence + 1);  // "lost" keeps the sequence it was written with
}

BOOST_AUTO_TEST_CASE(a_snapshot_holds_nothing_a_subscriber_was_not_sent) {
  Fixture f;
  testing::ChpPeer peer(f.ctx, "tcp://127.0.0.1", f.port);
  BOOST_REQUIRE(peer.wait_connected());
  f.gate->close();
  int calls = f.gate->calls();
  peer.set("held", "1");
  BOOST_REQUIRE(wait_until([&] { return f.gate->calls() > calls; }, 5s));
  std::atomic<bool> opened{false};
  std::thread opener([&] {
    std::this_thread::sleep_for(200ms);
    opened = true;
    f.gate->open();
  });
  auto snap = peer.snapshot();
  bool after_the_fsync = opened.load();
  opener.join();
  BOOST_CHECK(after_the_fsync);  // the snapshot waited for the fsync of what it holds
  BOOST_REQUIRE(snap);
  auto held = peer.wait_kvpub("held", 5s);
  BOOST_REQUIRE(held);
  // The snapshot was cut only after "held" was durable and published.
  BOOST_CHECK(snap->entries.contains("held"));
  BOOST_CHECK_EQUAL(snap->sequence, held->sequence);
}

BOOST_AUTO_TEST_CASE(a_confirmed_write_is_answered_after_its_fsync) {
  Fixture f;
  Writer writer(f.ctx, f.port);
  writer.write("warm", std::string(16, 'w'));  // connected: answered once the gate is open
  BOOST_REQUIRE(writer.answer(5s));
  f.gate->close();
  int calls = f.gate->calls();
  writer.write("k", std::string(16, 'a'));
  BOOST_REQUIRE(wait_until([&] { return f.gate->calls() > calls; }, 5s));  // written, its fsync asked
  std::uint64_t turns = f.metrics.loop_turns.load();
  BOOST_CHECK(!writer.answer(300ms));
  BOOST_CHECK_GT(f.metrics.loop_turns.load(), turns);  // the loop did not wait for the disk
  BOOST_CHECK_EQUAL(f.metrics.writes_confirmed.load(), 1u);
  f.gate->open();
  auto outcome = writer.answer(5s);
  BOOST_REQUIRE(outcome);
  BOOST_CHECK(outcome->kind == protocol::chp::WriteOutcome::Kind::kApplied);
  BOOST_CHECK_EQUAL(outcome->sequence, 2u);
  BOOST_CHECK_EQUAL(f.metrics.writes_confirmed.load(), 2u);
}

BOOST_AUTO_TEST_CASE(a_failed_fsync_answers_a_confirmed_write_as_unknown) {
  Fixture f;
  Writer writer(f.ctx, f.port);
  writer.write("warm", std::string(16, 'w'));
  BOOST_REQUIRE(writer.answer(5s));
  f.gate->fail_next();
  writer.write("k", std::string(16, 'b'));
  auto outcome = writer.answer(5s);
  BOOST_REQUIRE(outcome);
  BOOST_CHECK(outcome->kind == protocol::chp::WriteOutcome::Kind::kUnknown);
  BOOST_CHECK_NE(outcome->detail.find("fsync failed"), std::string::npos);
  BOOST_CHECK_EQUAL(f.metrics.writes_confirmed.load(), 1u);  // the warm-up's only
}

BOOST_AUTO_TEST_SUITE_END()
