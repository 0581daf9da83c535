// A Database's write-failure readers never wait for a recovery: while a
// writer's DB::Resume is held up (a file system that blocks the files it
// writes), write_failing(), write_unrecoverable(), last_write_error() and
// sync_wal() answer within a deadline, and show the failure being recovered.
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <rocksdb/write_batch.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "storage/db/database.h"
#include "storage/faults/fault_env.h"
#include "tests/support/test_support.h"

using namespace std::chrono_literals;
using namespace zstore::storage;
using zstore::testing::TempDir;

namespace {

constexpr auto kDeadline = std::chrono::seconds(10);

// While closed, creating a log, table or MANIFEST file waits until open();
// it remembers which thread waited.
class Gate {
 public:
  void close() {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  void open() {
    std::lock_guard lock(mu_);
    closed_ = false;
    cv_.notify_all();
  }
  void pass() {
    std::unique_lock lock(mu_);
    if (!closed_) return;
    waiter_ = std::this_thread::get_id();
    cv_.notify_all();
    cv_.wait(lock, [&] { return !closed_; });
  }
  // Whether thread waits at the gate within the deadline.
  bool wait_for(std::thread::id thread) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, kDeadline, [&] { return waiter_ == thread; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
  std::thread::id waiter_;
};

class GatedFs final : public rocksdb::FileSystemWrapper {
 public:
  GatedFs(std::shared_ptr<rocksdb::FileSystem> target, Gate* gate)
      : FileSystemWrapper(std::move(target)), gate_(gate) {}
  const char* Name() const override { return "GatedFs"; }
  rocksdb::IOStatus NewWritableFile(const std::string& f, const rocksdb::FileOptions& fo,
                                    std::unique_ptr<rocksdb::FSWritableFile>* r, rocksdb::IODebugContext* g) override {
    if (fault_file_kind(f) != 0) gate_->pass();
    return FileSystemWrapper::NewWritableFile(f, fo, r, g);
  }

 private:
  Gate* gate_;
};

struct Fixture {
  TempDir dir;
  Gate gate;
  std::shared_ptr<WriteFaults> faults = std::make_shared<WriteFaults>();
  std::unique_ptr<Database> db;
  Fixture() {
    DatabaseOptions options;
    std::shared_ptr<rocksdb::Env> fault_env = make_fault_env(faults);
    options.env = std::shared_ptr<rocksdb::Env>(
        rocksdb::NewCompositeEnv(std::make_shared<GatedFs>(fault_env->GetFileSystem(), &gate)));
    options.resume_interval = 0ms;  // every write after a failure resumes
    BOOST_REQUIRE(Database::Open(dir.str(), options, &db).ok());
  }
  ~Fixture() {
    gate.open();
    db.reset();
  }
  Status put(const std::string& key) {
    rocksdb::WriteBatch batch;
    batch.Put(db->handle(Column::kChpMap), key, "value");
    return db->write(batch);
  }
};

// What a reactor, /metrics and the WAL syncer ask, on another thread.
struct Reads {
  bool failing = false;
  bool unrecoverable = true;
  std::string error;
  Status synced = Status::Ok();
};

}  // namespace

BOOST_AUTO_TEST_CASE(failure_readers_do_not_wait_for_a_resume) {
  Fixture f;
  BOOST_REQUIRE(f.put("before").ok());
  f.faults->arm(FaultFiles::kWal, FaultOps::kWrites, FaultError::kNoSpace);
  Status failed = f.put("lost");
  BOOST_REQUIRE_MESSAGE(failed.IsNoSpace(), failed.ToString());
  f.faults->disarm();

  // The next write resumes; its Resume waits at the gate.
  f.gate.close();
  std::promise<std::thread::id> writer_id;
  auto writer = std::async(std::launch::async, [&] {
    writer_id.set_value(std::this_thread::get_id());
    return f.put("after");
  });
  BOOST_REQUIRE_MESSAGE(f.gate.wait_for(writer_id.get_future().get()), "the writer's Resume never wrote a file");

  auto reads = std::async(std::launch::async, [&] {
    Reads r;
    r.failing = f.db->write_failing();
    r.unrecoverable = f.db->write_unrecoverable();
    r.error = f.db->last_write_error();
    r.synced = f.db->sync_wal();
    return r;
  });
  bool answered = reads.wait_for(kDeadline) == std::future_status::ready;
  f.gate.open();
  Status written = writer.get();
  BOOST_REQUIRE_MESSAGE(answered, "a reader waited for the Resume");
  Reads r = reads.get();
  BOOST_CHECK(r.failing);  // not recovered until the write after Resume succeeds
  BOOST_CHECK(!r.unrecoverable);
  BOOST_CHECK_EQUAL(r.error, failed.message());
  BOOST_CHECK_MESSAGE(r.synced.IsNoSpace(), r.synced.ToString());  // not synced while failing
  BOOST_CHECK_MESSAGE(written.ok(), written.ToString());
  BOOST_CHECK(!f.db->write_failing());
}
