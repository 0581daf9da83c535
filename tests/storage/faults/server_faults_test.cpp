// Storage faults under the real reactors, in-process on a temp store with the
// fault Env (storage/faults/fault_env.h), clients over loopback: while writes fail,
// the CHP server publishes nothing it did not persist and the Dafka store
// ACKs nothing it did not persist; both log it, keep serving snapshots,
// HUGZ and heads from what is on disk, and write again once the fault clears
// (or, after an unrecoverable error, once restarted).
#include <pthread.h>
#include <signal.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <boost/test/unit_test.hpp>
#include <atomic>
#include <functional>
#include <thread>
#include <memory>
#include <mutex>
#include <unistd.h>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "protocol/dafka_codec.h"
#include "server/chp/chp_server.h"
#include "server/dafka/dafka_store.h"
#include "server/http/http_health.h"
#include "server/jobs/storage_watch.h"
#include "server/dafka/tower.h"
#include "tests/support/dafka_node.h"
#include "storage/chp/chp_store.h"
#include "storage/dafka/dafka_log.h"
#include "storage/db/database.h"
#include "storage/faults/fault_env.h"
#include "tests/support/chp_peer.h"
#include "tests/support/test_support.h"

using namespace std::chrono_literals;
using namespace zstore;
using storage::FaultError;
using storage::FaultFiles;
using storage::FaultOps;
using testing::wait_until;
namespace chp = protocol::chp;
namespace dafka = protocol::dafka;
using Clock = std::chrono::steady_clock;

namespace {

std::string failure(const storage::Status& s) { return s.ok() ? std::string() : s.message(); }

// Keeps every formatted line. The reactors log on their threads while the
// test reads: text() copies under the sink's lock (reading the stream of an
// ostream_sink without it raced with the reactor's writes).
class CaptureSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::string text() {
    std::lock_guard<std::mutex> lock(mutex_);
    return text_;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    text_.append(line.data(), line.size());
  }
  void flush_() override {}

 private:
  std::string text_;
};

// Captures everything spdlog logs while alive.
class LogCapture {
 public:
  LogCapture() : previous_(spdlog::default_logger()) {
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink_));
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  std::string text() { return sink_->text(); }
  bool contains(const std::string& s) { return text().find(s) != std::string::npos; }

 private:
  std::shared_ptr<CaptureSink> sink_ = std::make_shared<CaptureSink>();
  std::shared_ptr<spdlog::logger> previous_;
};

// A data dir with the fault Env: database, CHP store and Dafka log.
struct FaultyStore {
  testing::TempDir dir;
  std::shared_ptr<storage::WriteFaults> faults = std::make_shared<storage::WriteFaults>();
  std::unique_ptr<storage::Database> db;
  std::unique_ptr<storage::ChpStore> chp;
  std::unique_ptr<storage::DafkaLog> log;

  FaultyStore() { open(); }
  void open() {
    storage::DatabaseOptions options;
    options.env = storage::make_fault_env(faults);
    options.resume_interval = 20ms;
    storage::Status s = storage::Database::Open(dir.str(), options, &db);
    BOOST_REQUIRE_MESSAGE(s.ok(), failure(s));
    BOOST_REQUIRE(storage::ChpStore::Open(db.get(), &chp).ok());
    BOOST_REQUIRE(storage::DafkaLog::Open(db.get(), &log).ok());
  }
  void reopen() {  // what restarting zstored does
    log.reset();
    chp.reset();
    (void)db->close();
    db.reset();
    open();
  }
};

struct ChpFixture {
  zmq::context_t ctx;
  FaultyStore store;
  server::ChpMetrics metrics;
  std::unique_ptr<server::ChpServer> server;
  std::uint16_t port = 0;

  explicit ChpFixture(bool start_now = true) {
    if (start_now) start();
  }
  ~ChpFixture() { stop(); }
  void start() {
    server::ChpServerConfig config;
    port = testing::free_port_range(3);
    config.port = port;
    config.hugz_interval = 100ms;
    server = std::make_unique<server::ChpServer>(ctx, *store.chp, config, metrics);
    server->start();
  }
  void stop() {
    if (server) server->stop();
    server.reset();
  }
};

bool no_kvpub_for(testing::ChpPeer& peer, const std::string& key, std::chrono::milliseconds quiet) {
  return !peer.wait_kvpub(key, quiet).has_value();
}

// The next HUGZ (the server's heartbeat), skipping KVPUBs.
std::optional<chp::Hugz> next_hugz(testing::ChpPeer& peer) {
  auto deadline = Clock::now() + 5s;
  while (Clock::now() < deadline) {
    auto u = peer.next_update(1s);
    if (u) {
      if (auto* h = std::get_if<chp::Hugz>(&*u)) return *h;
    }
  }
  return std::nullopt;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(chp_under_write_faults)

BOOST_AUTO_TEST_CASE(refused_updates_are_not_published_and_writes_resume) {
  LogCapture logs;
  ChpFixture f;
  testing::ChpPeer peer(f.ctx, "tcp://127.0.0.1", f.port);
  BOOST_REQUIRE(peer.wait_connected());
  peer.set("kept", "1");
  auto kept = peer.wait_kvpub("kept", 5s);
  BOOST_REQUIRE(kept);

  f.store.faults->arm(FaultFiles::kWal, FaultOps::kWrites, FaultError::kNoSpace);
  peer.set("lost", "2");
  BOOST_REQUIRE(wait_until([&] { return f.metrics.write_failures > 0; }, 5s));
  BOOST_CHECK(no_kvpub_for(peer, "lost", 300ms));
  std::uint64_t persisted = f.metrics.last_sequence;
  BOOST_CHECK_EQUAL(persisted, kept->sequence);

  // Still serving: snapshots of what is on disk, HUGZ with its sequence.
  auto snap = peer.snapshot();
  BOOST_REQUIRE(snap);
  BOOST_CHECK(snap->entries.contains("kept"));
  BOOST_CHECK(!snap->entries.contains("lost"));
  BOOST_CHECK_EQUAL(snap->sequence, persisted);
  auto hugz = next_hugz(peer);
  BOOST_REQUIRE(hugz);
  BOOST_CHECK_EQUAL(hugz->sequence, persisted);
  BOOST_CHECK(logs.contains("not published"));

  f.store.faults->disarm();
  std::optional<chp::KvMsg> after;
  BOOST_REQUIRE(wait_until(
      [&] {
        peer.set("after", "3");
        after = peer.wait_kvpub("after", 200ms);
        return after.has_value();
      },
      10s));
  BOOST_CHECK_EQUAL(after->sequence, persisted + 1);  // the refused update used no sequence
  BOOST_CHECK(logs.contains("writes resumed"));
  snap = peer.snapshot();
  BOOST_REQUIRE(snap);
  BOOST_CHECK(!snap->entries.contains("lost"));
  BOOST_CHECK(snap->entries.contains("after"));
  BOOST_CHECK_EQUAL(snap->sequence, f.metrics.last_sequence.load());
}

BOOST_AUTO_TEST_CASE(unrecoverable_error_keeps_serving_reads_until_restart) {
  LogCapture logs;
  ChpFixture f;
  testing::ChpPeer peer(f.ctx, "tcp://127.0.0.1", f.port);
  BOOST_REQUIRE(peer.wait_connected());
  peer.set("kept", "1");
  auto kept = peer.wait_kvpub("kept", 5s);
  BOOST_REQUIRE(kept);
  std::uint64_t persisted = kept->sequence;
  server::ServerView healthy_view;
  healthy_view.db = f.store.db.get();
  BOOST_CHECK(server::check_health(healthy_view, 5s).body.find("\"storage\":\"ok\"") != std::string::npos);
  server::StorageWatch idle(*f.store.db, 10ms, [] { BOOST_ERROR("stopped a healthy database"); });
  idle.check();
  BOOST_CHECK(!idle.stopped());

  f.store.faults->arm(FaultFiles::kWal, FaultOps::kWrites, FaultError::kIoError);  // EIO
  peer.set("lost", "2");
  BOOST_REQUIRE(wait_until([&] { return f.metrics.write_failures > 0; }, 5s));
  f.store.faults->disarm();
  // RocksDB does not resume after EIO on its log: still refused, said so.
  peer.set("refused", "3");
  BOOST_CHECK(no_kvpub_for(peer, "refused", 500ms));
  BOOST_CHECK(wait_until([&] { return logs.contains("restart to recover"); }, 5s));
  auto snap = peer.snapshot();
  BOOST_REQUIRE(snap);
  BOOST_CHECK(snap->entries.contains("kept"));
  BOOST_CHECK_EQUAL(snap->sequence, persisted);
  // /healthz says so, and zstored's watch stops the process to be restarted.
  server::ServerView view;
  view.db = f.store.db.get();
  server::Health health = server::check_health(view, 5s);
  BOOST_CHECK(!health.healthy);
  BOOST_CHECK_MESSAGE(health.body.find("\"storage\":\"stopped: ") != std::string::npos, health.body);
  int stops = 0;
  server::StorageWatch watch(*f.store.db, 10ms, [&] { ++stops; });
  watch.check();
  watch.check();
  BOOST_CHECK(watch.stopped());
  BOOST_CHECK_EQUAL(stops, 1);
  BOOST_CHECK(logs.contains("storage stopped"));

  f.stop();
  f.store.reopen();
  BOOST_CHECK_EQUAL(f.store.chp->last_sequence(), persisted);
  f.start();
  testing::ChpPeer again(f.ctx, "tcp://127.0.0.1", f.port);
  BOOST_REQUIRE(again.wait_connected());
  snap = again.snapshot();
  BOOST_REQUIRE(snap);
  BOOST_CHECK(snap->entries.contains("kept"));
  BOOST_CHECK(!snap->entries.contains("lost"));
  BOOST_CHECK(!snap->entries.contains("refused"));
}

// Found by server_handlers_fuzz: a signal handled on the CHP reactor's thread
// (libFuzzer's timer there) made its poll throw EINTR, which ended the
// process. zstored blocks signals in its threads; an embedding process may
// not. Here SIGUSR1 (no SA_RESTART) is deliverable only to the reactor.
BOOST_AUTO_TEST_CASE(chp_reactor_survives_signals) {
  struct sigaction action {};
  action.sa_handler = [](int) {};
  sigemptyset(&action.sa_mask);
  struct sigaction previous {};
  BOOST_REQUIRE_EQUAL(sigaction(SIGUSR1, &action, &previous), 0);
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, nullptr);
  {
    ChpFixture f(false);
    pthread_sigmask(SIG_UNBLOCK, &usr1, nullptr);
    f.start();  // the reactor thread inherits SIGUSR1 unblocked
    pthread_sigmask(SIG_BLOCK, &usr1, nullptr);
    testing::ChpPeer peer(f.ctx, "tcp://127.0.0.1", f.port);
    BOOST_REQUIRE(peer.wait_connected());
    for (int i = 0; i < 20; ++i) {
      ::kill(::getpid(), SIGUSR1);
      std::string key = "after-signal-" + std::to_string(i);
      peer.set(key, "v");
      BOOST_REQUIRE_MESSAGE(peer.wait_kvpub(key, 5s), "no KVPUB after signal " << i);
    }
  }
  pthread_sigmask(SIG_UNBLOCK, &usr1, nullptr);
  sigaction(SIGUSR1, &previous, nullptr);
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

// A Dafka producer and consumer in one: PUB beaconed to the tower, SUB on
// the store's XPUB for ACKs to its partition and DIRECT-HEADs to itself.
class FakeNode {
 public:
  FakeNode(zmq::context_t& ctx, std::uint16_t tower_port, const std::string& store_endpoint)
      : node_(ctx, tower_port, {static_cast<char>(dafka::MsgId::kAck), static_cast<char>(dafka::MsgId::kDirectHead)}) {
    node_.connect(store_endpoint);
  }
  const std::string& address() const { return node_.address(); }

  dafka::Record record(std::uint64_t seq) const {
    return dafka::Record{"topic", address(), "topic", seq, "content-" + std::to_string(seq)};
  }

  // Sends records from..to every 200 ms until an ACK reaches `to`.
  bool produce_until_acked(std::uint64_t from, std::uint64_t to, std::chrono::milliseconds timeout) {
    auto acked = [&](const dafka::Message& m) {
      auto* a = std::get_if<dafka::Ack>(&m);
      if (a && a->sequence > highest_ack_) highest_ack_ = a->sequence;
      return a && a->sequence >= to;
    };
    return node_
        .wait_for(acked, timeout,
                  [&] {
                    for (auto s = from; s <= to; ++s) node_.send(record(s));
                  })
        .has_value();
  }

  // GET-HEADS until the store's DIRECT-HEAD for our partition says head.
  bool head_is(std::uint64_t head) {
    auto is_head = [&](const dafka::Message& m) {
      auto* h = std::get_if<dafka::DirectHead>(&m);
      return h && h->partition == address() && h->sequence == head;
    };
    return node_.wait_for(is_head, 5s, [&] { node_.send(dafka::GetHeads{"topic", address()}); }).has_value();
  }

  std::uint64_t highest_ack() const { return highest_ack_; }

 private:
  testing::ScriptedDafkaNode node_;
  std::uint64_t highest_ack_ = 0;
};

// A tower and a DafkaStore on a FaultyStore, and a producer of one
// partition; `adjust` changes the store's config before it starts.
struct DafkaFixture {
  using Adjust = std::function<void(server::DafkaStoreConfig&, FaultyStore&)>;
  zmq::context_t ctx;
  FaultyStore store;
  std::uint16_t base = testing::free_port_range(3);
  server::TowerMetrics tower_metrics;
  server::Tower tower{ctx, "127.0.0.1", base, tower_metrics};
  server::DafkaMetrics metrics;
  std::unique_ptr<server::DafkaStore> dafka_store;
  std::unique_ptr<FakeNode> node;

  explicit DafkaFixture(const Adjust& adjust = {}) {
    tower.start();
    server::DafkaStoreConfig config;
    config.port = static_cast<std::uint16_t>(base + 2);
    config.towers = {"tcp://127.0.0.1:" + std::to_string(base)};
    config.beacon_interval = 100ms;
    config.fetch_retry = 200ms;
    if (adjust) adjust(config, store);
    dafka_store =
        std::make_unique<server::DafkaStore>(ctx, *store.log, testing::random_dafka_address(), config, metrics);
    dafka_store->start();
    node = std::make_unique<FakeNode>(ctx, base, dafka_store->endpoint());
  }
  void stop() {
    dafka_store->stop();
    tower.stop();
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(dafka_store_acks_nothing_unpersisted_and_resumes) {
  LogCapture logs;
  DafkaFixture f;
  FakeNode& node = *f.node;
  BOOST_REQUIRE(node.produce_until_acked(0, 2, 15s));

  f.store.faults->arm(FaultFiles::kWal, FaultOps::kWrites, FaultError::kNoSpace);
  BOOST_CHECK(!node.produce_until_acked(3, 4, 600ms));
  BOOST_CHECK(f.metrics.write_failures > 0);
  BOOST_CHECK_EQUAL(node.highest_ack(), 2u);
  BOOST_CHECK(node.head_is(2));  // heads are still served, from disk
  BOOST_CHECK(logs.contains("not acknowledged"));

  f.store.faults->disarm();
  BOOST_REQUIRE(node.produce_until_acked(3, 4, 10s));
  BOOST_CHECK(logs.contains("writes resumed"));
  f.stop();
  BOOST_CHECK_EQUAL(f.store.log->head("topic", node.address()).value_or(0), 4u);
  auto cursor = f.store.log->read("topic", node.address(), 0, 10);
  storage::DafkaRecord r;
  std::uint64_t expected = 0;
  while (cursor->next(&r)) {
    BOOST_CHECK_EQUAL(r.offset, expected);
    BOOST_CHECK_EQUAL(r.content, "content-" + std::to_string(expected));
    ++expected;
  }
  BOOST_CHECK_EQUAL(expected, 5u);
}

// Under a WAL sync queue (zstored's --sync always) the ACK waits for the
// fsync that covers the records, and a failed fsync ACKs nothing.
BOOST_AUTO_TEST_CASE(dafka_store_acks_only_after_the_fsync) {
  std::atomic<bool> hold{true};
  std::atomic<bool> failing{false};
  std::atomic<int> syncs{0};
  DafkaFixture f([&](server::DafkaStoreConfig& config, FaultyStore& store) {
    config.sync_wal = [&, db = store.db.get()] {
      ++syncs;
      while (hold) std::this_thread::sleep_for(1ms);
      if (failing) return storage::Status::IoError("injected fsync failure");
      return db->sync_wal();
    };
  });
  FakeNode& node = *f.node;
  BOOST_CHECK(!node.produce_until_acked(0, 2, 1500ms));  // stored, its fsync held
  BOOST_CHECK_GT(syncs.load(), 0);
  BOOST_CHECK_EQUAL(node.highest_ack(), 0u);
  BOOST_CHECK_EQUAL(f.store.log->head("topic", node.address()).value_or(0), 2u);
  hold = false;
  BOOST_REQUIRE(node.produce_until_acked(0, 2, 10s));

  failing = true;
  BOOST_CHECK(!node.produce_until_acked(3, 4, 600ms));
  BOOST_CHECK_GT(f.metrics.write_failures.load(), 0u);
  BOOST_CHECK_EQUAL(node.highest_ack(), 2u);  // no failed fsync's records were ACKed
  failing = false;
  BOOST_REQUIRE(node.produce_until_acked(3, 4, 10s));  // sent again: ACKed once durable
  f.stop();
}
