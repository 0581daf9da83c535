// CHP history blocks (chp_history.h): the updates of one apply are one
// RocksDB entry, resumed from inside it, at most 64 KiB, trimmed whole by
// count and by age, mixed with one-update entries, and reported when
// damaged.
#include <boost/test/unit_test.hpp>

#include "protocol/byte_order.h"
#include "storage/chp/chp_history.h"
#include "storage/db/varint.h"
#include "tests/storage/chp/chp_store_fixture.h"
#include "tests/support/test_support.h"

using namespace chp_store_fixture;
using zstore::testing::TempDir;

namespace {

Opened open_with_history(const std::string& dir, std::uint64_t entries) {
  Opened o;
  BOOST_REQUIRE(Database::Open(dir, {}, &o.db).ok());
  BOOST_REQUIRE(ChpStore::Open(o.db.get(), &o.store, entries).ok());
  return o;
}

std::vector<ChpWrite> puts(int from, int to, std::size_t value_bytes = 1, std::uint64_t written_ms = 0) {
  std::vector<ChpWrite> out;
  for (int i = from; i < to; ++i) {
    ChpWrite w = put("k" + std::to_string(i), std::string(value_bytes, static_cast<char>('a' + i % 26)));
    w.written_ms = written_ms;
    out.push_back(std::move(w));
  }
  return out;
}

// The value sizes of the chp_history entries.
std::vector<std::size_t> entries(Database& db) {
  std::vector<std::size_t> out;
  std::unique_ptr<rocksdb::Iterator> it(db.db()->NewIterator(rocksdb::ReadOptions(), db.handle(Column::kChpHistory)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) out.push_back(it->value().size());
  BOOST_REQUIRE(it->status().ok());
  return out;
}

// (key, sequence) of every update a cursor gives, checked to succeed.
std::vector<std::pair<std::string, std::uint64_t>> drain(std::unique_ptr<ChpSnapshotCursor> cursor) {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  BOOST_REQUIRE(cursor);
  ChpRecord r;
  while (cursor->next(&r) || cursor->paused()) {
    if (cursor->paused()) continue;
    int i = std::stoi(r.key.substr(1));
    BOOST_REQUIRE_EQUAL(r.entry.value.front(), static_cast<char>('a' + i % 26));
    out.emplace_back(r.key, r.entry.sequence);
  }
  BOOST_REQUIRE(cursor->status().ok());
  return out;
}

std::vector<std::pair<std::string, std::uint64_t>> expected(int from, int to) {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  for (int i = from; i < to; ++i) out.emplace_back("k" + std::to_string(i), static_cast<std::uint64_t>(i + 1));
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(one_apply_is_one_entry_resumed_from_inside_it) {
  TempDir dir;
  auto o = open_with_history(dir.str(), 1'000'000);
  apply(*o, puts(0, 100));
  BOOST_CHECK_EQUAL(entries(*o.db).size(), 1u);
  BOOST_CHECK(drain(o->history_after(0)) == expected(0, 100));
  BOOST_CHECK(drain(o->history_after(37)) == expected(37, 100));  // sequences 38.. from inside the block
  BOOST_CHECK(drain(o->history_after(99)) == expected(99, 100));
  BOOST_CHECK(drain(o->history_after(100)).empty());
  auto k5 = drain(o->resume_after(37, "k5"));  // a subtree resume: k5, k50..k59 after 37
  BOOST_CHECK_EQUAL(k5.size(), 10u);
  for (const auto& [key, seq] : k5) BOOST_CHECK(key.starts_with("k5") && seq > 37);
  apply(*o, puts(100, 101));  // an apply of one update: one single entry
  BOOST_CHECK_EQUAL(entries(*o.db).size(), 2u);
  BOOST_CHECK(drain(o->history_after(95)) == expected(95, 101));
}

BOOST_AUTO_TEST_CASE(a_cursor_at_its_end_stays_there) {
  TempDir dir;
  auto o = open_with_history(dir.str(), 1000);
  apply(*o, puts(0, 10));
  auto cursor = o->history_after(4);
  ChpRecord r;
  int n = 0;
  while (cursor->next(&r)) ++n;
  BOOST_CHECK_EQUAL(n, 6);
  BOOST_CHECK(!cursor->next(&r));  // again: no step past the end
  BOOST_CHECK(!cursor->next(&r));
  BOOST_CHECK(cursor->status().ok());
}

// Sets keep their values in chp_map only, so long keys fill a block.
BOOST_AUTO_TEST_CASE(a_block_holds_at_most_64_kib) {
  TempDir dir;
  auto o = open_with_history(dir.str(), 1'000'000);
  auto writes = puts(0, 100);
  for (auto& w : writes) w.key += std::string(2000, '_');  // drain() reads the number before it
  apply(*o, writes);
  auto sizes = entries(*o.db);
  BOOST_CHECK_EQUAL(sizes.size(), 4u);  // about 32 updates of 2040 bytes per block
  for (std::size_t s : sizes) BOOST_CHECK_LE(s, zstore::storage::kMaxHistoryBlockBytes);
  auto with_keys = [&](int from) {
    auto out = expected(from, 100);
    for (auto& [key, seq] : out) key += std::string(2000, '_');
    return out;
  };
  BOOST_CHECK(drain(o->history_after(0)) == with_keys(0));
  BOOST_CHECK(drain(o->history_after(40)) == with_keys(40));
}

// A block holds at most the trim slack (a sixteenth of the bound) of
// updates, and the count bound drops whole blocks: what is kept is every
// update after history_from(), within the bound and its slack.
BOOST_AUTO_TEST_CASE(count_trim_drops_whole_blocks_within_the_bound_and_its_slack) {
  TempDir dir;
  auto o = open_with_history(dir.str(), 160);  // slack 10
  apply(*o, puts(0, 25));
  BOOST_CHECK_EQUAL(entries(*o.db).size(), 3u);                                 // 10, 10 and 5 updates
  for (int b = 0; b < 25; ++b) apply(*o, puts(25 + b * 11, 25 + b * 11 + 11));  // 10 and 1 each
  std::uint64_t from = o->history_from();
  std::uint64_t kept = 300 - from;
  BOOST_CHECK_GE(kept, 160u);
  BOOST_CHECK_LE(kept, 170u);
  BOOST_CHECK(!o->history_after(from - 1));
  BOOST_CHECK(drain(o->history_after(from)) == expected(static_cast<int>(from), 300));
}

BOOST_AUTO_TEST_CASE(age_trim_drops_a_block_once_all_its_updates_are_old) {
  TempDir dir;
  auto o = open_with_history(dir.str(), 1000);
  auto block = puts(0, 2, 1, 1000);
  block[1].written_ms = 2000;
  apply(*o, block);
  apply(*o, puts(2, 3, 1, 3000));
  BOOST_REQUIRE(o->trim_history_older_than(2000).ok());
  BOOST_CHECK_EQUAL(o->history_from(), 0u);  // k1 of the block is not old yet
  BOOST_CHECK(drain(o->history_after(0)) == expected(0, 3));
  BOOST_REQUIRE(o->trim_history_older_than(2001).ok());
  BOOST_CHECK_EQUAL(o->history_from(), 2u);
  BOOST_CHECK(drain(o->history_after(2)) == expected(2, 3));
  BOOST_CHECK_EQUAL(entries(*o.db).size(), 1u);
}

BOOST_AUTO_TEST_CASE(a_damaged_block_is_an_error_for_readers_and_trims) {
  TempDir dir;
  auto o = open_with_history(dir.str(), 1000);
  apply(*o, puts(0, 3));
  std::string key;
  zstore::protocol::put_be<std::uint64_t>(key, 3);
  key += zstore::storage::kHistoryBlockTag;
  std::string value;
  zstore::protocol::put_be<std::uint32_t>(value, 3);  // claims 3 updates, holds 1 and a torn length
  zstore::protocol::put_be<std::uint32_t>(value, 12);
  value += std::string(12, '\0');
  zstore::protocol::put_be<std::uint32_t>(value, 500);
  BOOST_REQUIRE(o.db->db()->Put(rocksdb::WriteOptions(), o.db->handle(Column::kChpHistory), key, value).ok());
  auto cursor = o->history_after(0);
  ChpRecord r;
  while (cursor->next(&r)) {
  }
  BOOST_CHECK(!cursor->status().ok());
  BOOST_CHECK(!o->trim_history_older_than(10'000).ok());
}

// Layout 4 packs numbers as varints and steps: a block cut short, a step
// of 0, a key or entry longer than what is left, an unknown kind, or a last
// sequence other than its key's is an error, never a misread update.
BOOST_AUTO_TEST_CASE(a_damaged_compact_block_is_an_error_for_readers_and_trims) {
  TempDir dir;
  auto o = open_with_history(dir.str(), 1000);
  std::vector<ChpWrite> writes = puts(0, 2, 1, 5000);
  writes.push_back(put("k2", ""));  // a delete: its whole entry is kept
  writes.back().written_ms = 5000;
  apply(*o, writes);  // 1, 2, 3: one block
  std::string key;
  zstore::protocol::put_be<std::uint64_t>(key, 3);
  key += zstore::storage::kHistoryCompactBlockTag;
  std::string good;
  BOOST_REQUIRE(o.db->db()->Get(rocksdb::ReadOptions(), o.db->handle(Column::kChpHistory), key, &good).ok());
  // count, then kind 1 | step 1 | time 5000 (2 bytes) | key length 2 | "k0".
  BOOST_REQUIRE_EQUAL(good.substr(4, 7), std::string("\x01\x01\x90\x4e\x02k0", 7));
  auto fails = [&](const std::string& label, const std::string& k, const std::string& value) {
    BOOST_TEST_CONTEXT(label) {
      TempDir other;
      auto d = open_with_history(other.str(), 1000);
      apply(*d, writes);
      BOOST_REQUIRE(d.db->db()->Delete(rocksdb::WriteOptions(), d.db->handle(Column::kChpHistory), key).ok());
      BOOST_REQUIRE(d.db->db()->Put(rocksdb::WriteOptions(), d.db->handle(Column::kChpHistory), k, value).ok());
      auto cursor = d->history_after(0);
      ChpRecord r;
      while (cursor->next(&r) || cursor->paused()) {
      }
      BOOST_CHECK(!cursor->status().ok());
      BOOST_CHECK(!d->trim_history_older_than(10'000).ok());
    }
  };
  fails("cut short", key, good.substr(0, good.size() - 1));
  fails("a byte too many", key, good + '\0');
  std::string zero_step = good;
  zero_step[5] = '\0';
  fails("a step of 0", key, zero_step);
  std::string long_key = good;
  long_key[8] = '\x7f';
  fails("a key past the end", key, long_key);
  std::string kind = good;
  kind[4] = '\x05';
  fails("an unknown kind", key, kind);
  std::string other_key = key;
  other_key[7] = '\x04';  // the block ends at 3
  fails("a key naming another last sequence", other_key, good);
  std::string count = good;
  count[3] = '\x04';
  fails("a count past its updates", key, count);
  // The same block, whole, reads back as written.
  auto cursor = o->history_after(0);
  std::vector<std::pair<std::string, std::uint64_t>> got;
  ChpRecord r;
  while (cursor->next(&r)) got.emplace_back(r.key, r.entry.sequence);
  BOOST_REQUIRE(cursor->status().ok());
  BOOST_CHECK((got == std::vector<std::pair<std::string, std::uint64_t>>{{"k0", 1}, {"k1", 2}, {"k2", 3}}));
}

// A trim walks from history_from() (what is below was dropped), and its
// range delete starts at the smallest key: an entry an older zstore left
// below history_from() goes with the next trim and is not counted.
BOOST_AUTO_TEST_CASE(a_trim_removes_entries_left_below_history_from) {
  TempDir dir;
  auto o = open_with_history(dir.str(), 1000);
  apply(*o, puts(0, 4, 1, 1000));  // sequences 1-4, one block
  apply(*o, puts(4, 5, 1, 3000));  // sequence 5
  BOOST_REQUIRE(o->trim_history_older_than(2000).ok());
  BOOST_REQUIRE_EQUAL(o->history_from(), 4u);
  std::string stale;
  zstore::protocol::put_be<std::uint64_t>(stale, 2);
  std::string written;
  zstore::protocol::put_be<std::uint64_t>(written, 1000);
  BOOST_REQUIRE(o.db->db()->Put(rocksdb::WriteOptions(), o.db->handle(Column::kChpHistory), stale, written).ok());
  apply(*o, puts(5, 6, 1, 4000));  // sequence 6
  BOOST_REQUIRE(o->trim_history_older_than(3500).ok());
  BOOST_CHECK_EQUAL(o->history_from(), 5u);      // only sequence 5 was walked and dropped
  BOOST_CHECK_EQUAL(entries(*o.db).size(), 1u);  // the stale entry went with it
  std::string count;
  BOOST_REQUIRE(o.db->get_meta(zstore::storage::kMetaChpHistoryCount, &count).ok());
  BOOST_REQUIRE_EQUAL(count.size(), 8u);
  BOOST_CHECK_EQUAL(zstore::protocol::get_be<std::uint64_t>(count), 1u);  // sequence 6
  BOOST_CHECK(drain(o->history_after(5)) == expected(5, 6));
}

// A trim step reads at most about 1 MiB; after a write of large values the
// store takes as many steps as the bytes written need, so the count bound
// holds whatever the value size.
BOOST_AUTO_TEST_CASE(the_count_bound_holds_after_a_batch_of_large_values) {
  TempDir dir;
  auto o = open_with_history(dir.str(), 16);  // slack 1
  apply(*o, puts(0, 40, 300 * 1024));
  std::uint64_t kept = 40 - o->history_from();
  BOOST_CHECK_GE(kept, 16u);
  BOOST_CHECK_LE(kept, 17u);
  BOOST_CHECK(drain(o->history_after(o->history_from())) == expected(static_cast<int>(o->history_from()), 40));
}

// The numbers of layout 4 (varint.h): every width round-trips, a varint
// cut short or past 64 bits is refused and leaves its input as it was, and
// zigzag steps go either way across the whole range.
BOOST_AUTO_TEST_CASE(varints_and_zigzag_steps_round_trip_and_refuse_bad_bytes) {
  using zstore::storage::apply_zigzag_delta;
  using zstore::storage::get_varint;
  using zstore::storage::put_varint;
  using zstore::storage::zigzag_delta;
  for (std::uint64_t v : {0ull, 1ull, 127ull, 128ull, 16383ull, 16384ull, 1ull << 40, ~0ull - 1, ~0ull}) {
    std::string bytes;
    put_varint(bytes, v);
    bytes += "rest";
    std::string_view in = bytes;
    std::uint64_t got = 0;
    BOOST_REQUIRE(get_varint(&in, &got));
    BOOST_CHECK_EQUAL(got, v);
    BOOST_CHECK_EQUAL(in, "rest");
    std::string_view cut(bytes.data(), bytes.size() - 5);  // its last byte gone
    BOOST_CHECK(!get_varint(&cut, &got));
    BOOST_CHECK_EQUAL(cut.size(), bytes.size() - 5);
  }
  std::string too_long(9, '\xff');
  too_long += '\x02';  // bit 64
  std::string_view in = too_long;
  std::uint64_t got = 0;
  BOOST_CHECK(!get_varint(&in, &got));
  std::string endless(11, '\x80');
  in = endless;
  BOOST_CHECK(!get_varint(&in, &got));
  for (auto [a, b] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
           {0, 0}, {5, 6}, {6, 5}, {0, ~0ull}, {~0ull, 0}, {1ull << 63, 3}, {1000, 1000 + (1ull << 62)}}) {
    BOOST_CHECK_EQUAL(apply_zigzag_delta(a, zigzag_delta(a, b)), b);
  }
  BOOST_CHECK_EQUAL(zigzag_delta(6, 5), 1u);  // one back
  BOOST_CHECK_EQUAL(zigzag_delta(5, 6), 2u);  // one on
}
