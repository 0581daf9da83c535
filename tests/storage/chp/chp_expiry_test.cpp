#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tests/storage/chp/chp_store_fixture.h"
#include "tests/support/test_support.h"

using zstore::testing::TempDir;

// ---- TTL index -----------------------------------------------------------------

BOOST_AUTO_TEST_CASE(due_expiries_returns_keys_due_at_now_in_expiry_order) {
  TempDir dir;
  auto s = open_store(dir.str());
  apply(*s, {put("k300", "v", 300), put("k100", "v", 100), put("k200", "v", 200), put("k1000", "v", 1000),
             put("forever", "v"), put("z100", "v", 100), put("a100", "v", 100)});
  BOOST_CHECK(due(*s, 99).empty());
  BOOST_CHECK(due(*s, 100) == (Dues{{"a100", 100}, {"k100", 100}, {"z100", 100}}));  // expiry == now is due
  BOOST_CHECK(due(*s, 250) == (Dues{{"a100", 100}, {"k100", 100}, {"z100", 100}, {"k200", 200}}));
  BOOST_CHECK(due(*s, 999).size() == 5u);
  BOOST_CHECK(due(*s, std::numeric_limits<std::uint64_t>::max() - 1).size() == 6u);
  BOOST_CHECK(due(*s, std::numeric_limits<std::uint64_t>::max()).size() == 6u);  // no wrap to "nothing is due"
  // Reporting a key as due does not remove it: the caller deletes it.
  BOOST_CHECK(get(*s, "k100"));
  BOOST_CHECK_EQUAL(expiry_index(*s.db).size(), 6u);
}

BOOST_AUTO_TEST_CASE(due_expiries_respects_the_limit) {
  TempDir dir;
  auto s = open_store(dir.str());
  std::vector<ChpWrite> writes;
  for (int i = 0; i < 10; ++i) writes.push_back(put("k" + std::to_string(i), "v", 100 + static_cast<std::uint64_t>(i)));
  apply(*s, writes);
  BOOST_CHECK(due(*s, 1000, 3) == (Dues{{"k0", 100}, {"k1", 101}, {"k2", 102}}));
  BOOST_CHECK(due(*s, 1000, 0).empty());
  BOOST_CHECK_EQUAL(due(*s, 1000, 10).size(), 10u);
  BOOST_CHECK_EQUAL(due(*s, 1000, 11).size(), 10u);

  // Expire the first three the way the server does, then ask again.
  apply(*s, {del("k0"), del("k1"), del("k2")});
  BOOST_CHECK(due(*s, 1000, 3) == (Dues{{"k3", 103}, {"k4", 104}, {"k5", 105}}));
}

// An index entry whose key was rewritten or deleted by a zstore before
// apply() removed old entries, written straight into the index.
void put_stale_index_entry(Database& db, std::uint64_t at, std::string_view key) {
  rocksdb::WriteBatch batch;
  batch.Put(db.handle(Column::kChpExpiry), zstore::storage::encode_expiry_key(at, key), rocksdb::Slice());
  BOOST_REQUIRE(db.write(batch).ok());
}

using Index = std::vector<std::pair<std::uint64_t, std::string>>;

BOOST_AUTO_TEST_CASE(apply_removes_the_old_index_entry_of_a_rewritten_or_deleted_key) {
  TempDir dir;
  auto s = open_store(dir.str());
  apply(*s, {put("no_ttl_now", "v", 100), put("later_ttl", "v", 100), put("deleted", "v", 100),
             put("earlier_ttl", "v", 500), put("same_ttl", "v", 100), put("live", "v", 150)});
  apply(*s, {put("no_ttl_now", "v2"), put("later_ttl", "v2", 400), del("deleted"), put("earlier_ttl", "v2", 120),
             put("same_ttl", "v2", 100)});
  BOOST_CHECK(expiry_index(*s.db) ==
              (Index{{100, "same_ttl"}, {120, "earlier_ttl"}, {150, "live"}, {400, "later_ttl"}}));
  BOOST_CHECK(due(*s, 200) == (Dues{{"same_ttl", 100}, {"earlier_ttl", 120}, {"live", 150}}));
  BOOST_CHECK_EQUAL(get(*s, "no_ttl_now")->expires_at_ms, 0u);
}

BOOST_AUTO_TEST_CASE(rewrites_within_one_batch_leave_only_the_last_index_entry) {
  TempDir dir;
  auto s = open_store(dir.str());
  apply(*s, {put("k", "v", 100)});
  apply(*s, {put("k", "v2", 200), put("k", "v3", 300), del("gone_before"), put("x", "v", 50), del("x")});
  BOOST_CHECK(expiry_index(*s.db) == (Index{{300, "k"}}));
  apply(*s, {put("k", "v4", 400), del("k")});
  BOOST_CHECK(expiry_index(*s.db).empty());
}

BOOST_AUTO_TEST_CASE(index_entries_of_keys_rewritten_after_a_reopen_are_removed) {
  TempDir dir;
  {
    auto s = open_store(dir.str());
    apply(*s, {put("a", "v", 100), put("b", "v", 200)});
    close_store(s);
  }
  auto s = open_store(dir.str());  // knows from disk that TTLs exist
  apply(*s, {put("a", "v2"), del("b")});
  BOOST_CHECK(expiry_index(*s.db).empty());
}

BOOST_AUTO_TEST_CASE(due_expiries_skips_and_removes_stale_index_entries) {
  TempDir dir;
  auto s = open_store(dir.str());
  apply(*s,
        {put("same_ttl", "v", 100), put("earlier_ttl", "v", 120), put("live", "v", 150), put("later_ttl", "v", 400)});
  put_stale_index_entry(*s.db, 100, "no_ttl_now");
  put_stale_index_entry(*s.db, 100, "later_ttl");
  put_stale_index_entry(*s.db, 100, "deleted");
  put_stale_index_entry(*s.db, 500, "earlier_ttl");
  BOOST_CHECK_EQUAL(expiry_index(*s.db).size(), 8u);

  // The stale entries at 100 come first but do not use up the limit.
  BOOST_CHECK(due(*s, 200, 2) == (Dues{{"same_ttl", 100}, {"earlier_ttl", 120}}));
  BOOST_CHECK(due(*s, 200) == (Dues{{"same_ttl", 100}, {"earlier_ttl", 120}, {"live", 150}}));
  BOOST_CHECK(
      expiry_index(*s.db) ==
      (Index{{100, "same_ttl"}, {120, "earlier_ttl"}, {150, "live"}, {400, "later_ttl"}, {500, "earlier_ttl"}}));

  // The stale, later entry of earlier_ttl goes once its own time comes.
  BOOST_CHECK(due(*s, 1000) == (Dues{{"same_ttl", 100}, {"earlier_ttl", 120}, {"live", 150}, {"later_ttl", 400}}));
  BOOST_CHECK_EQUAL(expiry_index(*s.db).size(), 4u);
}

BOOST_AUTO_TEST_CASE(due_expiries_removes_stale_entries_found_before_the_limit_stops) {
  TempDir dir;
  auto s = open_store(dir.str());
  apply(*s, {put("due", "v", 20)});
  put_stale_index_entry(*s.db, 10, "gone");
  put_stale_index_entry(*s.db, 30, "stale_after");
  BOOST_CHECK(due(*s, 100, 1) == (Dues{{"due", 20}}));
  // "gone" was passed over and removed; the scan stopped before "stale_after".
  BOOST_CHECK(expiry_index(*s.db) == (Index{{20, "due"}, {30, "stale_after"}}));
}

BOOST_AUTO_TEST_CASE(expiry_survives_reopen) {
  TempDir dir;
  {
    auto s = open_store(dir.str());
    apply(*s, {put("soon", "v", 100), put("late", "v", 900), put("never", "v")});
    close_store(s);
  }
  auto s = open_store(dir.str());
  BOOST_CHECK(due(*s, 500) == (Dues{{"soon", 100}}));
  BOOST_CHECK_EQUAL(get(*s, "late")->expires_at_ms, 900u);
  BOOST_CHECK(due(*s, 900) == (Dues{{"soon", 100}, {"late", 900}}));
}

// ---- sweep cost ------------------------------------------------------------------

namespace {

// Deleted entries (tombstones) one due_expiries call stepped over, from
// RocksDB's per-thread perf counters.
std::uint64_t tombstones_walked(ChpStore& store, std::uint64_t now_ms, std::size_t limit, Dues* out) {
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
  *out = due(store, now_ms, limit);
  std::uint64_t walked = rocksdb::get_perf_context()->internal_delete_skipped_count;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  return walked;
}

// Expires every key due at now_ms the way the server does: sweep, delete.
void expire_all(ChpStore& store, std::uint64_t now_ms) {
  for (Dues d = due(store, now_ms, 1024); !d.empty(); d = due(store, now_ms, 1024)) {
    std::vector<ChpWrite> writes;
    for (auto& [key, at] : d) writes.push_back(del(key));
    apply(store, std::move(writes));
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_sweep_does_not_walk_the_index_entries_earlier_sweeps_deleted) {
  constexpr int kKeys = 5000;
  TempDir dir;
  DatabaseOptions options;
  options.sync = SyncPolicy::kNone;
  auto s = open_store(dir.str(), options);
  std::vector<ChpWrite> writes;
  for (int i = 0; i < kKeys; ++i) writes.push_back(put(key_n(i), "v", 100 + static_cast<std::uint64_t>(i)));
  writes.push_back(put("later", "v", 50000));
  apply(*s, std::move(writes));
  expire_all(*s, 10000);
  BOOST_REQUIRE(expiry_index(*s.db) == (Index{{50000, "later"}}));

  Dues out;
  BOOST_CHECK_EQUAL(tombstones_walked(*s, 20000, 1024, &out), 0u);  // was kKeys: every one of them
  BOOST_CHECK(out.empty());
  BOOST_CHECK_EQUAL(tombstones_walked(*s, 60000, 1024, &out), 0u);
  BOOST_CHECK(out == (Dues{{"later", 50000}}));
}

BOOST_AUTO_TEST_CASE(a_sweep_while_keys_expire_walks_at_most_the_last_batch_deleted) {
  constexpr int kKeys = 5000;
  TempDir dir;
  DatabaseOptions options;
  options.sync = SyncPolicy::kNone;
  auto s = open_store(dir.str(), options);
  std::vector<ChpWrite> writes;
  for (int i = 0; i < kKeys; ++i) writes.push_back(put(key_n(i), "v", 100 + static_cast<std::uint64_t>(i)));
  apply(*s, std::move(writes));
  std::uint64_t worst = 0;
  int expired = 0;
  for (;;) {
    Dues d;
    worst = std::max(worst, tombstones_walked(*s, 10000, 500, &d));
    if (d.empty()) break;
    std::vector<ChpWrite> dels;
    for (auto& [key, at] : d) dels.push_back(del(key));
    apply(*s, std::move(dels));
    expired += static_cast<int>(d.size());
  }
  BOOST_CHECK_EQUAL(expired, kKeys);
  BOOST_CHECK_LE(worst, 500u);  // O(keys due), not O(all deleted so far)
}

BOOST_AUTO_TEST_CASE(a_write_or_load_with_an_expiry_below_the_last_sweep_is_still_found) {
  TempDir dir;
  auto s = open_store(dir.str());
  apply(*s, {put("a", "v", 100)});
  expire_all(*s, 1000);
  BOOST_CHECK(due(*s, 2000).empty());  // the next sweep starts above 2000
  apply(*s, {put("late", "v", 50)});   // e.g. a follower copying an already past expiry
  BOOST_CHECK(due(*s, 3000) == (Dues{{"late", 50}}));
  apply(*s, {del("late")});
  BOOST_CHECK(due(*s, 3000).empty());
  std::vector<ChpRecord> records = {{"loaded", {7, 60, "", "", "v"}}};
  BOOST_REQUIRE(s->load(records).ok());
  BOOST_CHECK(due(*s, 4000) == (Dues{{"loaded", 60}}));
}
