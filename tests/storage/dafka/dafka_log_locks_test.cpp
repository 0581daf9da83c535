// DafkaLog's readers never wait for a RocksDB write: while an append's or a
// trim's write-ahead log write is held up (a file system that blocks it),
// head(), known(), floor(), partitions_after() and topic_totals() answer
// within a deadline and show the state before the write.
#include <boost/test/unit_test.hpp>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "storage/dafka/dafka_log.h"
#include "storage/faults/fault_env.h"
#include "tests/support/test_support.h"

using namespace zstore::storage;
using zstore::testing::TempDir;

namespace {

constexpr auto kDeadline = std::chrono::seconds(10);

// While closed, an append to a write-ahead log waits until open() is called.
class Gate {
 public:
  void close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    waiting_ = 0;
  }
  void open() {
    std::lock_guard lock(mu_);
    closed_ = false;
    cv_.notify_all();
  }
  void pass() {
    std::unique_lock lock(mu_);
    if (!closed_) return;
    ++waiting_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return !closed_; });
  }
  bool wait_for_writer() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, kDeadline, [&] { return waiting_ > 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
  int waiting_ = 0;
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
    if (s.ok() && fault_file_kind(f) == static_cast<unsigned>(FaultFiles::kWal)) {
      *r = std::make_unique<GatedFile>(std::move(*r), gate_);
    }
    return s;
  }

 private:
  Gate* gate_;
};

const std::string kP = "0123456789ABCDEF0123456789ABCDEF";

struct Fixture {
  TempDir dir;
  Gate gate;
  std::unique_ptr<Database> db;
  std::unique_ptr<DafkaLog> log;
  Fixture() {
    DatabaseOptions options;
    options.env = std::shared_ptr<rocksdb::Env>(rocksdb::NewCompositeEnv(std::make_shared<GatedFs>(&gate)));
    BOOST_REQUIRE(Database::Open(dir.str(), options, &db).ok());
    BOOST_REQUIRE(DafkaLog::Open(db.get(), &log).ok());
  }
  ~Fixture() {
    gate.open();
    log.reset();
    db.reset();
  }
  Status append(std::uint64_t offset) {
    std::vector<DafkaRecord> records{{"t", kP, offset, "content"}};
    std::vector<DafkaAppend> outcomes;
    return log->append(records, &outcomes);
  }
};

// What the reactor and /metrics read, on another thread: whether it
// answered within the deadline, with the state seen.
struct Reads {
  std::optional<std::uint64_t> head;
  bool known = false;
  std::uint64_t floor = 0;
  std::size_t partitions = 0;
  std::uint64_t records = 0;
};

// Opens the gate once the reads answered or the deadline passed (reads
// stuck behind the write can finish only then).
bool read_in_time(DafkaLog& log, Gate& gate, Reads* out) {
  auto reads = std::async(std::launch::async, [&log] {
    Reads r;
    r.head = log.head("t", kP);
    r.known = log.known("t", kP);
    r.floor = log.floor("t", kP);
    r.partitions = log.partitions_after(nullptr, 10).size();
    auto totals = log.topic_totals();
    r.records = totals.empty() ? 0 : totals[0].records;
    (void)log.topic_count();
    (void)log.partitions_of("t");
    return r;
  });
  bool answered = reads.wait_for(kDeadline) == std::future_status::ready;
  gate.open();
  if (!answered) return false;
  *out = reads.get();
  return true;
}

}  // namespace

BOOST_AUTO_TEST_CASE(reads_do_not_wait_for_an_append_being_written) {
  Fixture f;
  BOOST_REQUIRE(f.append(0).ok());
  f.gate.close();
  auto writer = std::async(std::launch::async, [&] { return f.append(1); });
  BOOST_REQUIRE(f.gate.wait_for_writer());
  Reads r;
  bool answered = read_in_time(*f.log, f.gate, &r);
  BOOST_CHECK(writer.get().ok());
  BOOST_REQUIRE_MESSAGE(answered, "a read waited for the append's write");
  BOOST_CHECK(r.head == std::optional<std::uint64_t>(0));  // not yet the head being written
  BOOST_CHECK(r.known);
  BOOST_CHECK_EQUAL(r.records, 1u);
  BOOST_CHECK(f.log->head("t", kP) == std::optional<std::uint64_t>(1));
  BOOST_CHECK_EQUAL(f.log->topic_totals().at(0).records, 2u);
}

BOOST_AUTO_TEST_CASE(reads_do_not_wait_for_a_trim_being_written) {
  Fixture f;
  BOOST_REQUIRE(f.append(0).ok());
  BOOST_REQUIRE(f.append(1).ok());
  auto seen = f.log->partitions_after(nullptr, 1);
  BOOST_REQUIRE_EQUAL(seen.size(), 1u);
  f.gate.close();
  bool applied = false;
  auto trimmer = std::async(std::launch::async, [&] { return f.log->trim(seen[0], 1, 1, 7, &applied); });
  BOOST_REQUIRE(f.gate.wait_for_writer());
  Reads r;
  bool answered = read_in_time(*f.log, f.gate, &r);
  BOOST_CHECK(trimmer.get().ok());
  BOOST_REQUIRE_MESSAGE(answered, "a read waited for the trim's write");
  BOOST_CHECK_EQUAL(r.floor, 0u);  // the trim is not published before it is written
  BOOST_CHECK_EQUAL(r.records, 2u);
  BOOST_CHECK(r.head == std::optional<std::uint64_t>(1));
  BOOST_CHECK_EQUAL(r.partitions, 1u);
  BOOST_CHECK(applied);
  BOOST_CHECK_EQUAL(f.log->floor("t", kP), 1u);
  BOOST_CHECK_EQUAL(f.log->topic_totals().at(0).records, 1u);
}
