// Storage write faults through the fault Env (storage/faults/fault_env.h): a failed
// write applies nothing (in memory, on disk, after a restart), the stores'
// counters do not move, reads keep working, and writes resume by themselves
// once the fault clears (RocksDB's background error is recovered).
#include "storage/faults/fault_env.h"

#include <rocksdb/db.h>

#include <boost/test/unit_test.hpp>
#include <memory>
#include <string>
#include <vector>

#include "storage/chp/chp_store.h"
#include "storage/dafka/dafka_log.h"
#include "storage/db/database.h"
#include "tests/support/test_support.h"

using namespace std::chrono_literals;
using namespace zstore::storage;
using zstore::testing::TempDir;
using zstore::testing::wait_until;

namespace {

std::string failure(const Status& s) { return s.ok() ? std::string() : s.message(); }

struct Faulty {
  std::shared_ptr<WriteFaults> faults = std::make_shared<WriteFaults>();
  std::unique_ptr<Database> db;
  std::unique_ptr<ChpStore> chp;
  std::unique_ptr<DafkaLog> dafka;

  Faulty(const std::string& dir, SyncPolicy sync) { open(dir, sync); }

  void open(const std::string& dir, SyncPolicy sync) {
    DatabaseOptions options;
    options.sync = sync;
    options.env = make_fault_env(faults);
    options.resume_interval = 10ms;
    Status s = Database::Open(dir, options, &db);
    BOOST_REQUIRE_MESSAGE(s.ok(), failure(s));
    BOOST_REQUIRE(ChpStore::Open(db.get(), &chp).ok());
    BOOST_REQUIRE(DafkaLog::Open(db.get(), &dafka).ok());
  }

  void reopen(const std::string& dir, SyncPolicy sync) {
    dafka.reset();
    chp.reset();
    (void)db->close();
    db.reset();
    open(dir, sync);
  }

  Status put(const std::string& key, const std::string& value) {
    std::vector<ChpWrite> w{{key, "uuid", "", value, 0, 0}};
    return chp->apply(w);
  }

  bool has(const std::string& key, ChpEntry* entry = nullptr) {
    ChpEntry e;
    bool found = false;
    BOOST_REQUIRE(chp->get(key, &e, &found).ok());
    if (entry) *entry = e;
    return found;
  }

  // Retries a write until the recovery lets it through.
  bool put_eventually(const std::string& key, const std::string& value) {
    std::string last;
    bool ok = wait_until(
        [&] {
          Status s = put(key, value);
          last = failure(s);
          return s.ok();
        },
        5s);
    BOOST_TEST_MESSAGE("last refusal: " << last);
    return ok;
  }
};

void check_fault_then_recovery(FaultFiles files, FaultOps ops, SyncPolicy sync) {
  TempDir dir;
  Faulty f(dir.str(), sync);
  BOOST_REQUIRE(f.put("before", "1").ok());
  f.faults->arm(files, ops, FaultError::kNoSpace);
  Status s = f.put("lost", "2");
  BOOST_CHECK_MESSAGE(s.IsNoSpace(), s.ToString());  // the injected ENOSPC, by its code
  BOOST_TEST_MESSAGE("failed write: " << failure(s));
  BOOST_CHECK(f.db->write_failing());
  BOOST_CHECK(!f.db->write_unrecoverable());
  BOOST_CHECK_EQUAL(f.chp->last_sequence(), 1u);
  BOOST_CHECK(!f.has("lost"));
  BOOST_CHECK(f.has("before"));  // reads keep working
  Status synced = f.db->sync_wal();
  BOOST_CHECK_MESSAGE(synced.IsNoSpace(), synced.ToString());
  // Writes stay refused while the fault lasts, even after recovery attempts,
  // and say why: still no space.
  BOOST_CHECK(!wait_until([&] { return f.put("still", "3").ok(); }, 100ms));
  Status still = f.put("still", "3");
  BOOST_CHECK_MESSAGE(still.IsNoSpace(), still.ToString());
  BOOST_CHECK(f.faults->injected() > 0);

  f.faults->disarm();
  BOOST_REQUIRE(f.put_eventually("after", "4"));
  BOOST_CHECK(!f.db->write_failing());
  ChpEntry entry;
  BOOST_REQUIRE(f.has("after", &entry));
  BOOST_CHECK_EQUAL(entry.sequence, 2u);  // the failed writes used no sequence

  f.reopen(dir.str(), sync);
  BOOST_CHECK_EQUAL(f.chp->last_sequence(), 2u);
  BOOST_CHECK(f.has("before"));
  BOOST_CHECK(f.has("after", &entry));
  BOOST_CHECK_EQUAL(entry.sequence, 2u);
  BOOST_CHECK(!f.has("lost"));  // never acknowledged, never replayed
  BOOST_CHECK(!f.has("still"));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(write_faults)

BOOST_AUTO_TEST_CASE(file_kinds_from_names) {
  BOOST_CHECK_EQUAL(fault_file_kind("/d/000012.log"), static_cast<unsigned>(FaultFiles::kWal));
  BOOST_CHECK_EQUAL(fault_file_kind("000007.sst"), static_cast<unsigned>(FaultFiles::kTable));
  BOOST_CHECK_EQUAL(fault_file_kind("/d/MANIFEST-000005"), static_cast<unsigned>(FaultFiles::kManifest));
  BOOST_CHECK_EQUAL(fault_file_kind("/d/CURRENT"), static_cast<unsigned>(FaultFiles::kManifest));
  BOOST_CHECK_EQUAL(fault_file_kind("/d/LOG"), 0u);
  BOOST_CHECK_EQUAL(fault_file_kind("/d/OPTIONS-000009"), 0u);
  BOOST_CHECK_EQUAL(fault_file_kind("/d/x.log"), 0u);
}

BOOST_AUTO_TEST_CASE(wal_no_space_applies_nothing_and_recovers) {
  check_fault_then_recovery(FaultFiles::kWal, FaultOps::kWrites, SyncPolicy::kBatch);
  check_fault_then_recovery(FaultFiles::kWal, FaultOps::kWrites, SyncPolicy::kAlways);
}

BOOST_AUTO_TEST_CASE(wal_sync_no_space_with_sync_always_is_not_replayed) {
  // The record reached the log file but not stable storage: refused, and it
  // must not come back at the next start with a sequence reused since.
  check_fault_then_recovery(FaultFiles::kWal, FaultOps::kSyncs, SyncPolicy::kAlways);
}

BOOST_AUTO_TEST_CASE(no_space_on_every_file_recovers) {
  check_fault_then_recovery(FaultFiles::kAll, FaultOps::kWrites, SyncPolicy::kBatch);
}

BOOST_AUTO_TEST_CASE(wal_io_error_stops_writes_until_reopened) {
  TempDir dir;
  Faulty f(dir.str(), SyncPolicy::kBatch);
  BOOST_REQUIRE(f.put("before", "1").ok());
  f.faults->arm(FaultFiles::kWal);
  Status lost = f.put("lost", "2");
  BOOST_CHECK_MESSAGE(lost.IsIoError(), lost.ToString());
  f.faults->disarm();
  // RocksDB cannot resume after EIO on its log: refused, clearly, reads work.
  BOOST_CHECK(!wait_until([&] { return f.put("refused", "3").ok(); }, 200ms));
  BOOST_CHECK(f.db->write_unrecoverable());
  Status s = f.put("refused", "3");
  BOOST_CHECK(s.IsRefused());  // stopped on purpose until the restart
  BOOST_CHECK_MESSAGE(failure(s).find("restart") != std::string::npos, failure(s));
  BOOST_CHECK(f.has("before"));
  BOOST_CHECK_EQUAL(f.chp->last_sequence(), 1u);
  f.reopen(dir.str(), SyncPolicy::kBatch);  // what a restart does
  BOOST_CHECK(!f.db->write_failing());
  BOOST_CHECK(f.has("before"));
  BOOST_CHECK(!f.has("lost"));
  BOOST_CHECK(!f.has("refused"));
  BOOST_REQUIRE(f.put("after", "4").ok());
  ChpEntry entry;
  BOOST_REQUIRE(f.has("after", &entry));
  BOOST_CHECK_EQUAL(entry.sequence, 2u);
}

BOOST_AUTO_TEST_CASE(wal_sync_io_error_never_reuses_a_sequence) {
  // The refused record is in the log file (written, not synced): a restart
  // may replay it. Then it comes back whole, with its own sequence, and the
  // counter is above it: no sequence is ever given to two keys.
  TempDir dir;
  Faulty f(dir.str(), SyncPolicy::kAlways);
  BOOST_REQUIRE(f.put("before", "1").ok());
  f.faults->arm(FaultFiles::kWal, FaultOps::kSyncs);
  BOOST_CHECK(!f.put("unsynced", "2").ok());
  BOOST_CHECK(!f.has("unsynced"));
  BOOST_CHECK_EQUAL(f.chp->last_sequence(), 1u);
  f.faults->disarm();
  f.reopen(dir.str(), SyncPolicy::kAlways);
  BOOST_REQUIRE(f.put("after", "3").ok());
  ChpEntry unsynced;
  ChpEntry after;
  BOOST_REQUIRE(f.has("after", &after));
  if (f.has("unsynced", &unsynced)) {
    BOOST_TEST_MESSAGE("the unsynced record was replayed at reopen");
    BOOST_CHECK_EQUAL(unsynced.sequence, 2u);
    BOOST_CHECK_EQUAL(after.sequence, 3u);
  } else {
    BOOST_CHECK_EQUAL(after.sequence, 2u);
  }
  BOOST_CHECK_EQUAL(f.chp->last_sequence(), after.sequence);
}

BOOST_AUTO_TEST_CASE(failed_table_flush_blocks_writes_until_recovered) {
  TempDir dir;
  Faulty f(dir.str(), SyncPolicy::kBatch);
  BOOST_REQUIRE(f.put("a", "1").ok());
  f.faults->arm(FaultFiles::kTable, FaultOps::kWrites, FaultError::kNoSpace);
  rocksdb::FlushOptions fo;
  BOOST_CHECK(!f.db->db()->Flush(fo, f.db->handle(Column::kChpMap)).ok());
  // RocksDB now refuses writes (background error) although the WAL works.
  BOOST_CHECK(!f.put("b", "2").ok());
  BOOST_CHECK(f.has("a"));
  f.faults->disarm();
  BOOST_REQUIRE(f.put_eventually("b", "2"));
  f.reopen(dir.str(), SyncPolicy::kBatch);
  BOOST_CHECK(f.has("a"));
  BOOST_CHECK(f.has("b"));
  BOOST_CHECK_EQUAL(f.chp->last_sequence(), 2u);
}

BOOST_AUTO_TEST_CASE(dafka_append_failure_leaves_heads_unchanged) {
  TempDir dir;
  Faulty f(dir.str(), SyncPolicy::kAlways);
  std::vector<DafkaAppend> outcomes;
  std::vector<DafkaRecord> first{{"topic", "p", 0, "r0"}};
  BOOST_REQUIRE(f.dafka->append(first, &outcomes).ok());
  f.faults->arm(FaultFiles::kWal, FaultOps::kSyncs, FaultError::kNoSpace);
  std::vector<DafkaRecord> second{{"topic", "p", 1, "r1"}, {"topic", "p", 2, "r2"}};
  BOOST_CHECK(!f.dafka->append(second, &outcomes).ok());
  BOOST_CHECK_EQUAL(f.dafka->head("topic", "p").value_or(99), 0u);
  BOOST_CHECK(!f.dafka->first_after_gap("topic", "p"));
  f.faults->disarm();
  BOOST_REQUIRE(wait_until([&] { return f.dafka->append(second, &outcomes).ok(); }, 5s));
  BOOST_CHECK_EQUAL(f.dafka->head("topic", "p").value_or(99), 2u);
  f.reopen(dir.str(), SyncPolicy::kAlways);
  BOOST_CHECK_EQUAL(f.dafka->head("topic", "p").value_or(99), 2u);
}

BOOST_AUTO_TEST_SUITE_END()
