// In-process: /healthz while writes wait on the memtable budget (issue 52,
// "health tells the truth"). A flush blocked in its table file's first
// write keeps the memtables at the budget (8 MiB, the least), so a writer
// standing for a reactor waits in Database::write. /healthz answers at once
// throughout: degraded, "writes waiting: memtable budget full", while the
// loop still turned within stale_after; unhealthy (503) with the loop stuck
// and the same reason once it has waited longer; ok again after the flush.
#include <boost/test/unit_test.hpp>

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "server/dafka/dafka_metrics.h"
#include "server/http/http_server.h"
#include "storage/faults/fault_env.h"
#include "tests/ops/ops_support.h"

using namespace zstore;
using namespace zstore::server;
using zstore::testing::TempDir;
using zstore::testing::wait_until;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// Table files' writes wait while the gate is closed.
class Gate {
 public:
  void close() {
    std::lock_guard<std::mutex> l(mu_);
    closed_ = true;
  }
  void open() {
    std::lock_guard<std::mutex> l(mu_);
    closed_ = false;
    cv_.notify_all();
  }
  void pass() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [this] { return !closed_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
};

class GatedFile final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  GatedFile(std::unique_ptr<rocksdb::FSWritableFile> f, Gate* gate)
      : FSWritableFileOwnerWrapper(std::move(f)), gate_(gate) {}
  rocksdb::IOStatus Append(const rocksdb::Slice& d, const rocksdb::IOOptions& o, rocksdb::IODebugContext* g) override {
    gate_->pass();
    return FSWritableFileOwnerWrapper::Append(d, o, g);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& d, const rocksdb::IOOptions& o, const rocksdb::DataVerificationInfo& v,
                           rocksdb::IODebugContext* g) override {
    gate_->pass();
    return FSWritableFileOwnerWrapper::Append(d, o, v, g);
  }

 private:
  Gate* gate_;
};

class GatedFs final : public rocksdb::FileSystemWrapper {
 public:
  explicit GatedFs(Gate* gate) : FileSystemWrapper(rocksdb::FileSystem::Default()), gate_(gate) {}
  const char* Name() const override { return "GatedFs"; }
  rocksdb::IOStatus NewWritableFile(const std::string& f, const rocksdb::FileOptions& fo,
                                    std::unique_ptr<rocksdb::FSWritableFile>* r, rocksdb::IODebugContext* g) override {
    rocksdb::IOStatus s = FileSystemWrapper::NewWritableFile(f, fo, r, g);
    if (s.ok() && storage::fault_file_kind(f) == static_cast<unsigned>(storage::FaultFiles::kTable)) {
      *r = std::make_unique<GatedFile>(std::move(*r), gate_);
    }
    return s;
  }

 private:
  Gate* gate_;
};

struct Reply {
  int status = 0;
  nlohmann::json body;
  Clock::duration took{};
};

Reply healthz(std::uint16_t port) {
  auto start = Clock::now();
  auto r = testing::http_request(port, "GET", "/healthz");
  Reply out{r.status, nlohmann::json::object(), Clock::now() - start};
  if (r.status != 0) out.body = nlohmann::json::parse(r.body);
  return out;
}

constexpr auto kStaleAfter = 1500ms;

struct Fixture {
  TempDir dir;
  Gate gate;
  std::unique_ptr<storage::Database> db;
  DafkaMetrics loop;  // the writer's loop: a heartbeat before each write
  std::atomic<bool> stop{false};
  std::atomic<int> written{0};
  std::thread writer;
  Fixture() {
    storage::DatabaseOptions options;
    options.sync = storage::SyncPolicy::kNone;
    options.memtable_budget_bytes = storage::kMinMemtableBudgetBytes;
    options.env = std::shared_ptr<rocksdb::Env>(rocksdb::NewCompositeEnv(std::make_shared<GatedFs>(&gate)));
    auto s = storage::Database::Open(dir.str(), options, &db);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.message());
  }
  void start_writing() {
    writer = std::thread([this] {
      const std::string value(1 << 20, 'v');
      for (int i = 0; !stop.load(); ++i) {
        loop.loop_heartbeat_ms = loop_clock_ms();
        rocksdb::WriteBatch batch;
        batch.Put(db->handle(storage::Column::kDafkaRecords), "k" + std::to_string(i), value);
        if (!db->write(batch).ok()) return;
        ++written;
      }
    });
  }
  ~Fixture() {
    stop = true;
    gate.open();
    if (writer.joinable()) writer.join();
    db.reset();
  }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(healthz_names_writes_waiting_on_the_memtable_budget_and_answers_at_once, Fixture) {
  ServerView view;
  view.db = db.get();
  view.dafka = &loop;
  HttpConfig config;
  config.stale_after = kStaleAfter;
  HttpServer http(config, view);
  http.start();
  gate.close();
  start_writing();
  BOOST_REQUIRE_MESSAGE(wait_until([&] { return db->memory_use().writes_stalled; }), "the writes never waited");
  int stalled_at = written.load();

  Reply r = healthz(http.port());
  BOOST_TEST_MESSAGE("stalled after " << stalled_at << " MiB: " << r.body.dump());
  BOOST_TEST(r.took < 1s);
  BOOST_TEST(r.status == 200);
  BOOST_TEST(r.body["status"] == "degraded");
  BOOST_TEST(r.body["storage"] == "writes waiting: memtable budget full");

  // Waiting longer than stale_after: the loop is stuck too.
  BOOST_REQUIRE(wait_until([&] { return healthz(http.port()).status == 503; }));
  r = healthz(http.port());
  BOOST_TEST(r.took < 1s);
  BOOST_TEST(r.body["status"] == "unhealthy");
  BOOST_TEST(r.body["loops"]["dafka"]["state"] == "stuck");
  BOOST_TEST(r.body["storage"] == "writes waiting: memtable budget full");
  BOOST_TEST(written.load() == stalled_at);  // still waiting

  // The flush goes on: writes go on and health is ok again.
  gate.open();
  BOOST_REQUIRE(wait_until([&] { return written.load() > stalled_at + 16; }));
  stop = true;
  writer.join();
  loop.loop_heartbeat_ms = loop_clock_ms();
  BOOST_REQUIRE(wait_until([&] { return !db->memory_use().writes_stalled; }));
  r = healthz(http.port());
  BOOST_TEST(r.status == 200);
  BOOST_TEST(r.body["status"] == "ok");
  BOOST_TEST(r.body["storage"] == "ok");
}
