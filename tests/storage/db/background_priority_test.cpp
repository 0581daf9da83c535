// RocksDB's flush and compaction threads run below the process's priority
// (storage/db/background_priority.h), so they do not preempt the reactors.
#include <sys/resource.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <rocksdb/db.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "storage/db/background_priority.h"
#include "storage/db/database.h"
#include "tests/support/test_support.h"

using zstore::storage::Column;
using zstore::storage::Database;
using zstore::storage::DatabaseOptions;
using zstore::storage::kCompactionNiceIncrement;
using zstore::storage::kFlushNiceIncrement;
using zstore::storage::lowered_nice;
using zstore::testing::TempDir;

namespace {

// The nice value of each of this process's threads named name (field 19 of
// /proc/self/task/<tid>/stat; the name, field 2, has no spaces here).
std::map<std::string, int> nice_of_threads(const std::string& name) {
  std::map<std::string, int> out;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string line;
    std::getline(comm, line);
    if (line != name) continue;
    std::ifstream stat(task.path() / "stat");
    std::string field;
    int nice = 0;
    for (int i = 1; i <= 19 && stat >> field; ++i) {
      if (i == 19) nice = std::stoi(field);
    }
    out[task.path().filename().string()] = nice;
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(nice_values_are_lowered_relative_to_the_process_and_capped) {
  BOOST_CHECK_EQUAL(lowered_nice(0, 5), 5);
  BOOST_CHECK_EQUAL(lowered_nice(0, 19), 19);
  BOOST_CHECK_EQUAL(lowered_nice(10, 5), 15);
  BOOST_CHECK_EQUAL(lowered_nice(10, 19), 19);
  BOOST_CHECK_EQUAL(lowered_nice(-5, 5), 0);
  BOOST_CHECK_EQUAL(lowered_nice(19, 5), 19);
}

// Flushes and a compaction of the database at dir, opened with options.
static std::unique_ptr<Database> flushed_and_compacted(const TempDir& dir, const DatabaseOptions& options) {
  std::unique_ptr<Database> db;
  BOOST_REQUIRE(Database::Open(dir.str(), options, &db).ok());
  auto* cf = db->handle(Column::kChpMap);
  for (int round = 0; round < 2; ++round) {  // two table files to compact
    BOOST_REQUIRE(db->db()->Put(rocksdb::WriteOptions(), cf, "key" + std::to_string(round), "value").ok());
    BOOST_REQUIRE(db->db()->Flush(rocksdb::FlushOptions(), cf).ok());
  }
  BOOST_REQUIRE(db->db()->CompactRange(rocksdb::CompactRangeOptions(), cf, nullptr, nullptr).ok());

  return db;
}

// By default RocksDB's threads keep the process's priority. First in this
// file: a thread lowered once (below) stays lowered for the process.
BOOST_AUTO_TEST_CASE(threads_keep_the_process_priority_by_default) {
  errno = 0;
  int base = ::getpriority(PRIO_PROCESS, 0);
  BOOST_REQUIRE_EQUAL(errno, 0);
  TempDir dir;
  auto db = flushed_and_compacted(dir, DatabaseOptions{});
  auto threads = nice_of_threads("rocksdb:high");
  auto low = nice_of_threads("rocksdb:low");
  threads.insert(low.begin(), low.end());
  BOOST_REQUIRE(!threads.empty());
  for (auto [tid, nice] : threads) BOOST_CHECK_EQUAL(nice, base);
  BOOST_REQUIRE(db->close().ok());
}

BOOST_AUTO_TEST_CASE(flush_and_compaction_threads_run_below_the_process) {
  errno = 0;
  int base = ::getpriority(PRIO_PROCESS, 0);
  BOOST_REQUIRE_EQUAL(errno, 0);
  TempDir dir;
  DatabaseOptions options;
  options.shared_core = true;  // zstored --shared-core
  auto db = flushed_and_compacted(dir, options);
  auto flush = nice_of_threads("rocksdb:high");
  auto compaction = nice_of_threads("rocksdb:low");
  BOOST_REQUIRE(!flush.empty());
  BOOST_REQUIRE(!compaction.empty());
  for (auto [tid, nice] : flush) BOOST_CHECK_EQUAL(nice, lowered_nice(base, kFlushNiceIncrement));
  for (auto [tid, nice] : compaction) BOOST_CHECK_EQUAL(nice, lowered_nice(base, kCompactionNiceIncrement));
  errno = 0;
  BOOST_CHECK_EQUAL(::getpriority(PRIO_PROCESS, 0), base);  // the calling thread keeps its own
  BOOST_REQUIRE(db->close().ok());
}
