// ChpSnapshotCursor::next_view: the map's cursor hands out views into
// RocksDB's memory, valid until the next read, equal to what next() copies.
// ChpStore::approximate_bytes: a prefix's size, estimated without a scan.
#include <boost/test/unit_test.hpp>

#include <limits>
#include <string>
#include <vector>

#include "storage/chp/chp_store.h"
#include "tests/storage/chp/chp_store_fixture.h"
#include "tests/support/test_support.h"

using namespace chp_store_fixture;
using zstore::storage::ChpRecordView;
using zstore::testing::TempDir;

namespace {

constexpr int kKeys = 3000;

std::string key_of(int i) {
  std::string k = "key/" + std::to_string(100000 + i);
  return k;
}
std::string value_of(int i) { return std::string(40 + i % 200, static_cast<char>('a' + i % 26)) + std::to_string(i); }

// kKeys keys flushed to tables (a reopen flushes): a scan crosses many blocks.
Opened store_on_tables(const TempDir& dir) {
  auto s = open_store(dir.str());
  std::vector<ChpWrite> writes;
  for (int i = 0; i < kKeys; ++i) writes.push_back(put(key_of(i), value_of(i), i % 3 == 0 ? 4000000000000u + i : 0));
  apply(*s, writes);
  close_store(s);
  return open_store(dir.str());
}

}  // namespace

BOOST_AUTO_TEST_CASE(views_hold_each_record_until_the_next_read) {
  TempDir dir;
  auto s = store_on_tables(dir);
  auto cursor = s->snapshot("");
  ChpRecordView v;
  int i = 0;
  for (; cursor->next_view(&v); ++i) {
    BOOST_REQUIRE(i < kKeys);
    // Checked after the read returned: the cursor must not have moved its
    // iterator (and freed the block the views point into) yet.
    BOOST_REQUIRE_EQUAL(v.key, key_of(i));
    BOOST_REQUIRE_EQUAL(v.entry.value, value_of(i));
    BOOST_REQUIRE_EQUAL(v.entry.sequence, static_cast<std::uint64_t>(i + 1));
    BOOST_REQUIRE_EQUAL(v.entry.expires_at_ms, i % 3 == 0 ? 4000000000000u + i : 0u);
  }
  BOOST_CHECK_EQUAL(i, kKeys);
  BOOST_CHECK(cursor->status().ok());
}

BOOST_AUTO_TEST_CASE(views_and_copies_see_the_same_records) {
  TempDir dir;
  auto s = store_on_tables(dir);
  apply(*s, {put(key_of(5), "rewritten"), del(key_of(6)), put("zz", "last")});  // memtable over the tables
  auto by_copy = s->snapshot("");
  auto by_view = s->snapshot("");
  ChpRecord r;
  ChpRecordView v;
  int n = 0;
  while (by_copy->next(&r)) {
    BOOST_REQUIRE(by_view->next_view(&v));
    BOOST_REQUIRE_EQUAL(v.key, r.key);
    BOOST_REQUIRE_EQUAL(v.entry.value, r.entry.value);
    BOOST_REQUIRE_EQUAL(v.entry.uuid, r.entry.uuid);
    BOOST_REQUIRE_EQUAL(v.entry.properties, r.entry.properties);
    BOOST_REQUIRE_EQUAL(v.entry.sequence, r.entry.sequence);
    ++n;
  }
  BOOST_CHECK(!by_view->next_view(&v));
  BOOST_CHECK_EQUAL(n, kKeys);  // one deleted, one added
}

BOOST_AUTO_TEST_CASE(a_prefix_cursor_mixing_both_reads_skips_nothing) {
  TempDir dir;
  auto s = store_on_tables(dir);
  auto cursor = s->snapshot("key/1000");  // keys 0..99 of ours: key/100000..key/100099
  ChpRecord r;
  ChpRecordView v;
  std::vector<std::string> seen;
  for (int i = 0;; ++i) {
    if (i % 2 == 0) {
      if (!cursor->next(&r)) break;
      seen.push_back(r.key);
    } else {
      if (!cursor->next_view(&v)) break;
      seen.emplace_back(v.key);
    }
  }
  BOOST_REQUIRE_EQUAL(seen.size(), 100u);
  for (int i = 0; i < 100; ++i) BOOST_CHECK_EQUAL(seen[i], key_of(i));
}

// approximate_bytes: what a snapshot of a prefix would read, estimated
// without reading it, in the memtables and in the tables alike.
BOOST_AUTO_TEST_CASE(approximate_bytes_tells_a_small_prefix_from_a_large_one) {
  TempDir dir;
  auto s = open_store(dir.str());
  std::vector<ChpWrite> writes;
  for (int i = 0; i < 4000; ++i) writes.push_back(put("big/" + std::to_string(100000 + i), std::string(1000, 'b')));
  writes.push_back(put("tiny/a", "1"));
  writes.push_back(put("tiny/b", "2"));
  apply(*s, writes);
  for (int round = 0; round < 2; ++round) {  // in the memtables, then in tables (a reopen flushes)
    BOOST_TEST_CONTEXT("round " << round) {
      BOOST_CHECK_GT(s->approximate_bytes("big/"), 2u << 20);  // 4 MB of values
      BOOST_CHECK_LT(s->approximate_bytes("tiny/"), 64u << 10);
      BOOST_CHECK_LT(s->approximate_bytes("none/"), 64u << 10);
      BOOST_CHECK_EQUAL(s->approximate_bytes(""), std::numeric_limits<std::uint64_t>::max());
    }
    close_store(s);
    s = open_store(dir.str());
  }
}
