// RocksDB's flushes and compactions write through a rate limiter that
// refills often (storage/db/background_pacing.h), and its limit is lifted
// while a column family stalls writes.
#include "storage/db/background_pacing.h"

#include <boost/test/unit_test.hpp>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "storage/db/database.h"
#include "storage/db/database_options.h"
#include "storage/db/pacing_limiter.h"
#include "tests/support/test_support.h"

using zstore::storage::BackgroundPacing;
using zstore::storage::Column;
using zstore::storage::Database;
using zstore::storage::DatabaseOptions;
using zstore::storage::kBackgroundWriteBufferBytes;
using zstore::storage::kLiftAtImmutableMemtables;
using zstore::storage::kPacedBackgroundBytesPerSec;
using zstore::storage::kUnpacedBackgroundBytesPerSec;
using zstore::storage::PacingLimiter;
using zstore::storage::Status;
using zstore::testing::TempDir;

namespace {

rocksdb::WriteStallInfo stall(const std::string& cf, rocksdb::WriteStallCondition cur,
                              rocksdb::WriteStallCondition prev) {
  rocksdb::WriteStallInfo info;
  info.cf_name = cf;
  info.condition.cur = cur;
  info.condition.prev = prev;
  return info;
}

// The options that pace flushes and compactions (zstored --shared-core).
DatabaseOptions shared_core() {
  DatabaseOptions o;
  o.shared_core = true;
  return o;
}

}  // namespace

// By default RocksDB writes its tables unpaced; the listener only counts
// write stalls (for /metrics).
BOOST_AUTO_TEST_CASE(database_options_do_not_pace_by_default) {
  rocksdb::DBOptions o = zstore::storage::db_options(DatabaseOptions{}, true);
  BOOST_TEST(o.rate_limiter == nullptr);
  BOOST_TEST(o.writable_file_max_buffer_size == rocksdb::DBOptions().writable_file_max_buffer_size);
  bool listens = std::any_of(o.listeners.begin(), o.listeners.end(),
                             [&](const auto& l) { return std::string(l->Name()) == "ZstoreBackgroundPacing"; });
  BOOST_TEST(listens);
  TempDir dir;
  std::unique_ptr<Database> db;
  BOOST_REQUIRE(Database::Open((dir.path() / "data").string(), DatabaseOptions{}, &db).ok());
  BOOST_TEST(db->pacing() != nullptr);
  BOOST_TEST(!db->paces_background());
  BOOST_TEST(db->close().ok());
}

BOOST_AUTO_TEST_CASE(database_options_pace_background_writes_in_small_pieces) {
  rocksdb::DBOptions o = zstore::storage::db_options(shared_core(), true);
  BOOST_REQUIRE(o.rate_limiter != nullptr);
  BOOST_TEST(o.rate_limiter->GetBytesPerSecond() == kPacedBackgroundBytesPerSec);
  // A job writes at most this much before it may wait for a refill.
  BOOST_TEST(o.rate_limiter->GetSingleBurstBytes() <= 64 * 1024);
  BOOST_TEST(o.writable_file_max_buffer_size <= kBackgroundWriteBufferBytes);
  BOOST_TEST(kBackgroundWriteBufferBytes <= 64u * 1024);
  bool listens = std::any_of(o.listeners.begin(), o.listeners.end(),
                             [&](const auto& l) { return std::string(l->Name()) == "ZstoreBackgroundPacing"; });
  BOOST_TEST(listens);
}

// 200 KiB at 10 MiB/s, the bucket holding 1 KiB: at least 19 ms of sleeps
// (a lower bound only, which a loaded machine cannot break).
BOOST_AUTO_TEST_CASE(the_limiter_paces_requests_beyond_its_burst) {
  PacingLimiter limiter(10 << 20, 100);
  BOOST_TEST(limiter.GetSingleBurstBytes() == (10 << 20) / 1000000 * 100);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) limiter.Request(10 * 1024, rocksdb::Env::IO_HIGH, nullptr);
  auto elapsed = std::chrono::steady_clock::now() - start;
  BOOST_TEST(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count() >= 19);
  BOOST_TEST(limiter.GetTotalBytesThrough(rocksdb::Env::IO_HIGH) == 20 * 10 * 1024);
  BOOST_TEST(limiter.GetTotalBytesThrough() == 20 * 10 * 1024);
  BOOST_TEST(limiter.GetTotalRequests(rocksdb::Env::IO_LOW) == 0);
}

// Requests of both priorities from two threads, the rate changing under
// them, all return: no request waits for another to wake it.
BOOST_AUTO_TEST_CASE(the_limiter_lets_concurrent_requests_of_both_priorities_through) {
  PacingLimiter limiter(64 << 20, 100);
  auto requests = [&](rocksdb::Env::IOPriority pri) {
    for (int i = 0; i < 2000; ++i) limiter.Request(4096, pri, nullptr);
  };
  std::thread low(requests, rocksdb::Env::IO_LOW);
  std::thread high(requests, rocksdb::Env::IO_HIGH);
  for (int i = 0; i < 100; ++i) {
    limiter.SetBytesPerSecond(i % 2 ? kUnpacedBackgroundBytesPerSec : (64 << 20));
    std::this_thread::sleep_for(std::chrono::microseconds(200));  // paces the rate changes under the requests
  }
  low.join();
  high.join();
  BOOST_TEST(limiter.GetTotalRequests() == 4000);
  BOOST_TEST(limiter.GetTotalBytesThrough(rocksdb::Env::IO_LOW) == 2000 * 4096);
}

BOOST_AUTO_TEST_CASE(a_stall_lifts_the_limit_until_every_family_is_back_to_normal) {
  using C = rocksdb::WriteStallCondition;
  BackgroundPacing pacing;
  const auto& limiter = pacing.limiter();
  BOOST_TEST(!pacing.lifted());
  BOOST_TEST(limiter->GetBytesPerSecond() == kPacedBackgroundBytesPerSec);

  pacing.OnStallConditionsChanged(stall("chp_map", C::kDelayed, C::kNormal));
  BOOST_TEST(pacing.lifted());
  BOOST_TEST(limiter->GetBytesPerSecond() == kUnpacedBackgroundBytesPerSec);
  pacing.OnStallConditionsChanged(stall("chp_history", C::kStopped, C::kNormal));
  pacing.OnStallConditionsChanged(stall("chp_map", C::kStopped, C::kDelayed));
  pacing.OnStallConditionsChanged(stall("chp_map", C::kNormal, C::kStopped));
  // chp_history still stalls writes.
  BOOST_TEST(pacing.lifted());
  BOOST_TEST(limiter->GetBytesPerSecond() == kUnpacedBackgroundBytesPerSec);

  pacing.OnStallConditionsChanged(stall("chp_history", C::kNormal, C::kStopped));
  BOOST_TEST(!pacing.lifted());
  BOOST_TEST(limiter->GetBytesPerSecond() == kPacedBackgroundBytesPerSec);
}

// The limiter is the one a zstore database's flushes write through.
BOOST_AUTO_TEST_CASE(a_flush_writes_through_the_limiter) {
  TempDir dir;
  std::unique_ptr<Database> db;
  Status s = Database::Open((dir.path() / "data").string(), shared_core(), &db);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.message());
  rocksdb::WriteBatch batch;
  for (int i = 0; i < 1000; ++i)
    batch.Put(db->handle(Column::kChpMap), "key" + std::to_string(i), std::string(100, 'v'));
  BOOST_REQUIRE(db->write(batch).ok());
  const auto& limiter = db->db()->GetDBOptions().rate_limiter;
  BOOST_REQUIRE(limiter != nullptr);
  std::int64_t before = limiter->GetTotalBytesThrough(rocksdb::Env::IO_HIGH);
  BOOST_REQUIRE(db->db()->Flush(rocksdb::FlushOptions(), db->handle(Column::kChpMap)).ok());
  BOOST_TEST(limiter->GetTotalBytesThrough(rocksdb::Env::IO_HIGH) > before + 100 * 1000);
}

namespace {

BackgroundPacing* pacing_of(Database& db) {
  auto* pacing = db.pacing();
  BOOST_REQUIRE(pacing != nullptr);
  return pacing;
}

bool wait_paced(const BackgroundPacing& pacing) {
  return zstore::testing::wait_until([&] { return !pacing.lifted(); }, std::chrono::seconds(30));
}

bool writes_delayed(Database& db) {
  zstore::storage::WriteHold hold;
  return zstore::storage::write_hold(db.db(), &hold) && hold.delayed;
}

}  // namespace

// Memtables sealed faster than flushes end lift the limit; the count is
// RocksDB's own again after the next flush.
BOOST_AUTO_TEST_CASE(memtables_piling_up_lift_the_limit_until_a_flush_catches_up) {
  TempDir dir;
  std::unique_ptr<Database> db;
  Status s = Database::Open((dir.path() / "data").string(), shared_core(), &db);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.message());
  auto pacing = pacing_of(*db);
  BOOST_TEST(!pacing->lifted());
  for (std::uint64_t i = 1; i < kLiftAtImmutableMemtables; ++i) pacing->OnMemTableSealed(rocksdb::MemTableInfo());
  BOOST_TEST(!pacing->lifted());
  pacing->OnMemTableSealed(rocksdb::MemTableInfo());
  BOOST_TEST(pacing->lifted());
  BOOST_TEST(pacing->limiter()->GetBytesPerSecond() == kUnpacedBackgroundBytesPerSec);

  rocksdb::WriteBatch batch;
  batch.Put(db->handle(Column::kChpMap), "key", "value");
  BOOST_REQUIRE(db->write(batch).ok());
  BOOST_REQUIRE(db->db()->Flush(rocksdb::FlushOptions(), db->handle(Column::kChpMap)).ok());
  // RocksDB may tell its listeners after Flush() returns.
  BOOST_TEST(wait_paced(*pacing));
  BOOST_TEST(pacing->limiter()->GetBytesPerSecond() == kPacedBackgroundBytesPerSec);
}

// /metrics reports what the listener saw (server/http/db_admin.h): each change
// into a delay or a stop counts once, and so does each lift of the limit.
BOOST_AUTO_TEST_CASE(stall_transitions_and_lifts_are_counted) {
  using C = rocksdb::WriteStallCondition;
  BackgroundPacing pacing;
  pacing.OnStallConditionsChanged(stall("chp_map", C::kDelayed, C::kNormal));
  pacing.OnStallConditionsChanged(stall("chp_map", C::kDelayed, C::kDelayed));  // no change: not counted
  pacing.OnStallConditionsChanged(stall("chp_history", C::kStopped, C::kNormal));
  auto s = pacing.stats();
  BOOST_TEST(s.delays == 1u);
  BOOST_TEST(s.stops == 1u);
  BOOST_TEST(s.stalled_families == 2u);
  BOOST_TEST(s.lifted);
  BOOST_TEST(s.lifts == 1u);  // lifted once, however many families stall
  pacing.OnStallConditionsChanged(stall("chp_map", C::kStopped, C::kDelayed));
  pacing.OnStallConditionsChanged(stall("chp_map", C::kNormal, C::kStopped));
  pacing.OnStallConditionsChanged(stall("chp_history", C::kNormal, C::kStopped));
  s = pacing.stats();
  BOOST_TEST(s.delays == 1u);
  BOOST_TEST(s.stops == 2u);
  BOOST_TEST(s.stalled_families == 0u);
  BOOST_TEST(!s.lifted);
  pacing.OnStallConditionsChanged(stall("dafka_records", C::kDelayed, C::kNormal));
  BOOST_TEST(pacing.stats().lifts == 2u);
}

// The server finds the open database's listener, the one pacing its writes.
BOOST_AUTO_TEST_CASE(the_pacing_of_an_open_database_is_found) {
  TempDir dir;
  std::unique_ptr<Database> db;
  BOOST_REQUIRE(Database::Open((dir.path() / "data").string(), shared_core(), &db).ok());
  auto pacing = pacing_of(*db);
  BOOST_TEST(pacing->limiter() == db->db()->GetDBOptions().rate_limiter);
  BOOST_TEST(db->paces_background());
  BOOST_TEST(!pacing->stats().lifted);
  BOOST_TEST(db->close().ok());
}

// A "stopped" notice delivered after the "normal" that ended it: the end
// of the next flush, or a /metrics scrape, asks RocksDB and paces again.
BOOST_AUTO_TEST_CASE(a_stall_notice_arriving_late_is_forgotten_once_rocksdb_lets_writes_through) {
  using C = rocksdb::WriteStallCondition;
  TempDir dir;
  std::unique_ptr<Database> db;
  BOOST_REQUIRE(Database::Open((dir.path() / "data").string(), shared_core(), &db).ok());
  auto pacing = pacing_of(*db);
  pacing->OnStallConditionsChanged(stall("chp_map", C::kNormal, C::kStopped));   // the flush's, first
  pacing->OnStallConditionsChanged(stall("chp_map", C::kStopped, C::kDelayed));  // the writer's, late
  BOOST_TEST(pacing->lifted());
  rocksdb::WriteBatch batch;
  batch.Put(db->handle(Column::kChpMap), "key", "value");
  BOOST_REQUIRE(db->write(batch).ok());
  BOOST_REQUIRE(db->db()->Flush(rocksdb::FlushOptions(), db->handle(Column::kChpMap)).ok());
  BOOST_TEST(wait_paced(*pacing));
  BOOST_TEST(pacing->stats().stalled_families == 0u);

  pacing->OnStallConditionsChanged(stall("chp_history", C::kStopped, C::kDelayed));
  BOOST_TEST(pacing->lifted());
  pacing->reconcile(db->db());
  BOOST_TEST(!pacing->lifted());
  BOOST_TEST(pacing->limiter()->GetBytesPerSecond() == kPacedBackgroundBytesPerSec);
  BOOST_TEST(db->close().ok());
}

// While RocksDB really delays writes (flushes paused, chp_map at 31 of its
// 32 memtables), asking it keeps the limit lifted; once flushes run again
// and catch up, the limit is back.
BOOST_AUTO_TEST_CASE(a_real_stall_keeps_the_limit_lifted_until_flushes_catch_up) {
  TempDir dir;
  std::unique_ptr<Database> db;
  BOOST_REQUIRE(Database::Open((dir.path() / "data").string(), shared_core(), &db).ok());
  auto pacing = pacing_of(*db);
  BOOST_REQUIRE(db->db()->PauseBackgroundWork().ok());
  const std::string value(256 << 10, 'v');
  for (int i = 0; i < 400 && !writes_delayed(*db); ++i) {
    rocksdb::WriteBatch batch;
    batch.Put(db->handle(Column::kChpMap), "key" + std::to_string(i), value);
    BOOST_REQUIRE(db->write(batch).ok());
  }
  BOOST_REQUIRE(writes_delayed(*db));
  BOOST_TEST(pacing->stats().stalled_families == 1u);
  pacing->reconcile(db->db());
  BOOST_TEST(pacing->stats().stalled_families == 1u);  // still stalled, not only memtables waiting
  BOOST_TEST(pacing->lifted());
  BOOST_TEST(pacing->stats().delays >= 1u);
  BOOST_REQUIRE(db->db()->ContinueBackgroundWork().ok());
  BOOST_TEST(wait_paced(*pacing));
  BOOST_TEST(!writes_delayed(*db));
  BOOST_TEST(db->close().ok());
}
