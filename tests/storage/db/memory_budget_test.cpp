// The database's one memory budget (storage/db/memory_budget.h): a burst of
// large CHP values never takes the memtables past the budget plus one value,
// writes go on (the stall ends: no wedge), and every family shares one
// block cache.
#include <rocksdb/db.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "storage/db/database.h"
#include "tests/storage/chp/chp_store_fixture.h"
#include "tests/support/test_support.h"

using zstore::testing::TempDir;
using namespace chp_store_fixture;

namespace {

constexpr std::uint64_t kBudget = 32ull << 20;
constexpr std::size_t kValueBytes = 4u << 20;  // as 16 MiB values against 128 MiB: each one its own chp_map memtable

DatabaseOptions small_budget() {
  DatabaseOptions o;
  o.sync = SyncPolicy::kNone;
  o.memtable_budget_bytes = kBudget;
  o.block_cache_bytes = zstore::storage::kMinBlockCacheBytes;
  return o;
}

std::uint64_t all_memtables(Database& db) {
  std::uint64_t bytes = 0;
  BOOST_REQUIRE(db.db()->GetAggregatedIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables, &bytes));
  return bytes;
}

}  // namespace

BOOST_AUTO_TEST_CASE(burst_of_large_values_keeps_memtables_within_the_budget) {
  TempDir dir;
  Opened store = open_store(dir.str(), small_budget());
  // One value of slack, and 1 MiB for the entry, the history, meta and the
  // arenas' first blocks of the other families.
  const std::uint64_t bound = kBudget + kValueBytes + (1u << 20);
  std::uint64_t peak = 0;
  auto deadline = std::chrono::steady_clock::now() + zstore::testing::scaled(std::chrono::seconds(60));
  for (int i = 0; i < 48; ++i) {
    apply(*store, {put("/burst/" + std::to_string(i), std::string(kValueBytes, static_cast<char>('a' + i % 26)))});
    std::uint64_t held = store.db->memory_use().memtable_bytes;
    std::uint64_t listed = all_memtables(*store.db);
    peak = std::max({peak, held, listed});
    BOOST_REQUIRE_MESSAGE(held <= bound && listed <= bound, "after value " << i << ": memtables hold " << held
                                                                           << " (RocksDB lists " << listed
                                                                           << ") against a bound of " << bound);
    BOOST_REQUIRE_MESSAGE(std::chrono::steady_clock::now() < deadline, "the burst took too long: writes wedged?");
  }
  BOOST_TEST_MESSAGE("memtable peak " << (peak >> 20) << " MiB, budget " << (kBudget >> 20) << " MiB");
  ChpEntry last;
  bool found = false;
  BOOST_REQUIRE(store->get("/burst/47", &last, &found).ok());
  BOOST_REQUIRE(found);
  BOOST_TEST(last.value.size() == kValueBytes);
  close_store(store);
}

BOOST_AUTO_TEST_CASE(memory_use_reports_the_budget_and_one_shared_block_cache) {
  TempDir dir;
  DatabaseOptions o = small_budget();
  o.block_cache_bytes = 8ull << 20;
  Opened store = open_store(dir.str(), o);
  zstore::storage::MemoryUse use = store.db->memory_use();
  BOOST_TEST(use.memtable_budget_bytes == kBudget);
  BOOST_TEST(use.block_cache_capacity_bytes == (8ull << 20));
  BOOST_TEST(use.memtable_bytes <= kBudget);
  // Every family's tables read through the same cache.
  for (auto column : {Column::kMeta, Column::kChpMap, Column::kDafkaRecords, Column::kChpHistory}) {
    std::uint64_t capacity = 0;
    BOOST_REQUIRE(store.db->db()->GetIntProperty(store.db->handle(column), rocksdb::DB::Properties::kBlockCacheCapacity,
                                                 &capacity));
    BOOST_TEST(capacity == (8ull << 20));
  }
  close_store(store);
}
