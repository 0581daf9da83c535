// WalSyncer and Database::take_unsynced: the --sync batch fsync runs on its
// own thread, only after writes, once more at stop, and really reaches the
// write-ahead log (a fault Env failing WAL syncs sees the calls).
#include "server/jobs/wal_syncer.h"

#include <rocksdb/write_batch.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <memory>
#include <thread>

#include "storage/faults/fault_env.h"
#include "tests/support/test_support.h"

using namespace std::chrono_literals;
using zstore::server::WalSyncer;
using zstore::storage::Column;
using zstore::storage::Database;
using zstore::storage::DatabaseOptions;
using zstore::storage::SyncPolicy;
using zstore::testing::TempDir;
using zstore::testing::wait_until;

namespace {

std::unique_ptr<Database> open(const TempDir& dir, SyncPolicy policy,
                               std::shared_ptr<zstore::storage::WriteFaults> faults = nullptr) {
  DatabaseOptions options;
  options.sync = policy;
  if (faults) options.env = zstore::storage::make_fault_env(faults);
  std::unique_ptr<Database> db;
  BOOST_REQUIRE(Database::Open(dir.str(), options, &db).ok());
  return db;
}

void put(Database& db, const std::string& key) {
  rocksdb::WriteBatch batch;
  batch.Put(db.handle(Column::kChpMap), key, "value");
  BOOST_REQUIRE(db.write(batch).ok());
}

}  // namespace

BOOST_AUTO_TEST_CASE(only_batch_writes_are_marked_unsynced_and_taking_clears_the_mark) {
  for (SyncPolicy policy : {SyncPolicy::kNone, SyncPolicy::kBatch, SyncPolicy::kAlways}) {
    TempDir dir;
    auto db = open(dir, policy);
    (void)db->take_unsynced();  // the layout version written at creation
    BOOST_CHECK(!db->take_unsynced());
    put(*db, "k");
    BOOST_CHECK_EQUAL(db->take_unsynced(), policy == SyncPolicy::kBatch);
    BOOST_CHECK(!db->take_unsynced());
  }
}

BOOST_AUTO_TEST_CASE(syncs_after_writes_only) {
  TempDir dir;
  auto db = open(dir, SyncPolicy::kBatch);
  (void)db->take_unsynced();
  WalSyncer syncer(*db, 10ms);
  syncer.start();
  // Ten idle intervals in which no sync may happen: a window, not a wait (no
  // hook counts the syncer's idle turns).
  std::this_thread::sleep_for(100ms);
  BOOST_CHECK_EQUAL(syncer.syncs(), 0u);
  put(*db, "k");
  BOOST_CHECK(wait_until([&] { return syncer.syncs() == 1; }));
  BOOST_CHECK(!db->take_unsynced());
  syncer.stop();
  BOOST_CHECK_EQUAL(syncer.syncs(), 1u);
}

BOOST_AUTO_TEST_CASE(stop_syncs_what_is_left_without_waiting_for_the_interval) {
  TempDir dir;
  auto db = open(dir, SyncPolicy::kBatch);
  WalSyncer syncer(*db, std::chrono::hours(1));
  syncer.start();
  put(*db, "k");
  auto before = std::chrono::steady_clock::now();
  syncer.stop();
  BOOST_CHECK_LT(std::chrono::steady_clock::now() - before, 30s);
  BOOST_CHECK_EQUAL(syncer.syncs(), 1u);
  BOOST_CHECK(!db->take_unsynced());
}

// RocksDB treats a failed WAL sync as fatal: writes stop until a restart.
BOOST_AUTO_TEST_CASE(a_failed_sync_reaches_the_wal_and_is_not_retried_while_writes_fail) {
  TempDir dir;
  auto faults = std::make_shared<zstore::storage::WriteFaults>();
  auto db = open(dir, SyncPolicy::kBatch, faults);
  faults->arm(zstore::storage::FaultFiles::kWal, zstore::storage::FaultOps::kSyncs);
  put(*db, "k");  // written to the log; only its sync fails
  WalSyncer syncer(*db, 10ms);
  syncer.start();
  BOOST_CHECK(wait_until([&] { return faults->injected() >= 1; }));  // the syncer called the WAL's fsync
  BOOST_CHECK(wait_until([&] { return syncer.syncs() == 1; }));
  BOOST_CHECK(db->write_failing());
  std::this_thread::sleep_for(150ms);     // fifteen intervals in which nothing may happen: a window, not a wait
  BOOST_CHECK_EQUAL(syncer.syncs(), 1u);  // no attempt, and no log line, per interval
  syncer.stop();
  BOOST_CHECK_EQUAL(syncer.syncs(), 1u);
  BOOST_CHECK(db->take_unsynced());  // still owed
}

// A full disk (ENOSPC) is recoverable: writes resume once space is back.
BOOST_AUTO_TEST_CASE(syncing_waits_while_writes_fail_and_resumes_with_the_next_good_write) {
  TempDir dir;
  auto faults = std::make_shared<zstore::storage::WriteFaults>();
  auto db = open(dir, SyncPolicy::kBatch, faults);
  put(*db, "k");  // unsynced
  faults->arm(zstore::storage::FaultFiles::kAll, zstore::storage::FaultOps::kWrites,
              zstore::storage::FaultError::kNoSpace);
  rocksdb::WriteBatch failing;
  failing.Put(db->handle(Column::kChpMap), "k1", "value");
  BOOST_REQUIRE(!db->write(failing).ok());
  WalSyncer syncer(*db, 10ms);
  syncer.start();
  std::this_thread::sleep_for(150ms);     // fifteen intervals in which nothing may happen: a window, not a wait
  BOOST_CHECK_EQUAL(syncer.syncs(), 0u);  // quiet
  faults->disarm();
  // The next write recovers the database (once the resume interval has
  // passed) and marks the log unsynced again: the syncer syncs it.
  BOOST_CHECK(wait_until([&] {
    rocksdb::WriteBatch batch;
    batch.Put(db->handle(Column::kChpMap), "k2", "value");
    return db->write(batch).ok();
  }));
  BOOST_CHECK(wait_until([&] { return syncer.syncs() == 1; }));
  syncer.stop();
  BOOST_CHECK(!db->write_failing());
  BOOST_CHECK(!db->take_unsynced());
}
