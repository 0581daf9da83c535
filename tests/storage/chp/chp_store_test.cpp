#include "storage/chp/chp_store.h"

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>
#include <signal.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "storage/chp/chp_map_batch.h"
#include "storage/db/database.h"
#include "tests/storage/chp/chp_store_fixture.h"
#include "tests/support/test_support.h"

namespace fs = std::filesystem;
using zstore::testing::TempDir;
using namespace std::string_literals;

namespace {

const char* const kCrashChildTest = "crash_child_applies_without_close_then_is_killed";
constexpr int kCrashChildBatches = 10;
constexpr int kCrashChildBatchSize = 100;

}  // namespace

// ---- sequences ------------------------------------------------------------

BOOST_AUTO_TEST_CASE(fresh_store_starts_at_sequence_0_and_synced) {
  TempDir dir;
  auto s = open_store(dir.str());
  BOOST_CHECK_EQUAL(s->last_sequence(), 0u);
  BOOST_CHECK(s->synced());
}

BOOST_AUTO_TEST_CASE(apply_assigns_consecutive_sequences_from_last_plus_one) {
  TempDir dir;
  auto s = open_store(dir.str());
  BOOST_CHECK(apply(*s, {put("a", "1"), put("b", "2"), put("c", "3")}) == (std::vector<std::uint64_t>{1, 2, 3}));
  BOOST_CHECK_EQUAL(s->last_sequence(), 3u);
  BOOST_CHECK(apply(*s, {put("a", "4"), put("d", "5")}) == (std::vector<std::uint64_t>{4, 5}));
  BOOST_CHECK_EQUAL(s->last_sequence(), 5u);

  std::vector<ChpWrite> none;
  BOOST_CHECK(s->apply(none).ok());
  BOOST_CHECK_EQUAL(s->last_sequence(), 5u);

  auto a = get(*s, "a");
  BOOST_REQUIRE(a);
  BOOST_CHECK_EQUAL(a->sequence, 4u);
  BOOST_CHECK_EQUAL(a->value, "4");
}

BOOST_AUTO_TEST_CASE(get_returns_every_stored_field) {
  TempDir dir;
  auto s = open_store(dir.str());
  ChpWrite w = put("k\0ey"s, "v\0al"s, 1700000000000ull);
  w.uuid = std::string(16, '\x01');
  w.properties = "ttl=5\n";
  apply(*s, {w});
  auto e = get(*s, "k\0ey"s);
  BOOST_REQUIRE(e);
  BOOST_CHECK(*e == (ChpEntry{1, 1700000000000ull, std::string(16, '\x01'), "ttl=5\n", "v\0al"s}));
}

BOOST_AUTO_TEST_CASE(get_of_missing_key_is_ok_and_not_found) {
  TempDir dir;
  auto s = open_store(dir.str());
  BOOST_CHECK(!get(*s, "missing"));
  apply(*s, {put("k", "v")});
  BOOST_CHECK(!get(*s, "k\0"s));  // a longer key is another key
  BOOST_CHECK(!get(*s, ""));
  BOOST_CHECK(get(*s, "k"));
}

// What a conditional write is judged against: each key's sequence,
// expiry and uuid, absent for a missing or deleted key, from the complete
// key index's knowledge (a fresh map) and from reads (a reopened map,
// whose index is not built yet).
BOOST_AUTO_TEST_CASE(current_versions_give_each_keys_sequence_expiry_and_uuid) {
  TempDir dir;
  const std::vector<std::string_view> keys{"a", "b", "gone", "long", "missing"};
  auto check = [&](ChpStore& store) {
    std::vector<zstore::storage::ChpKeyVersion> v{zstore::storage::ChpKeyVersion{}};
    BOOST_REQUIRE(store.current_versions(keys, {}, &v).ok());
    BOOST_REQUIRE_EQUAL(v.size(), keys.size());
    BOOST_TEST(v[0].found);
    BOOST_TEST(v[0].sequence == 4u);
    BOOST_TEST(v[0].expires_at_ms == 0u);
    BOOST_TEST(v[0].uuid_is(std::string(16, 'A')));
    BOOST_TEST(!v[0].uuid_is(std::string(16, 'B')));
    BOOST_TEST(v[1].found);
    BOOST_TEST(v[1].sequence == 2u);
    BOOST_TEST(v[1].expires_at_ms == 1700000000000ull);
    BOOST_TEST(!v[2].found);  // deleted
    BOOST_TEST(v[3].found);
    BOOST_TEST(!v[3].uuid_is(std::string(16, 'L')));  // its uuid is 17 bytes: no request's
    BOOST_TEST(!v[4].found);
  };
  {
    auto s = open_store(dir.str());
    auto w = [](std::string key, char uuid, std::size_t uuid_size = 16, std::uint64_t expires = 0) {
      ChpWrite x = put(std::move(key), "v", expires);
      x.uuid = std::string(uuid_size, uuid);
      return x;
    };
    apply(*s, {w("a", 'X'), w("b", 'B', 16, 1700000000000ull), w("gone", 'G'), w("a", 'A'), w("long", 'L', 17)});
    apply(*s, {del("gone")});
    BOOST_REQUIRE(s->key_index_complete());
    check(*s);
    close_store(s);
  }
  auto s = open_store(dir.str());
  BOOST_REQUIRE(!s->key_index_complete());  // no scan started: every key is read
  check(*s);
}

BOOST_AUTO_TEST_CASE(last_sequence_persists_across_clean_reopen) {
  TempDir dir;
  {
    auto s = open_store(dir.str());
    apply(*s, {put("a", "1"), put("b", "2")});
    apply(*s, {del("a")});
    close_store(s);
  }
  auto s = open_store(dir.str());
  BOOST_CHECK_EQUAL(s->last_sequence(), 3u);
  BOOST_CHECK(apply(*s, {put("c", "3")}) == std::vector<std::uint64_t>{4});
  BOOST_CHECK(!get(*s, "a"));
  BOOST_CHECK_EQUAL(get(*s, "b")->sequence, 2u);
}

// Run only by last_sequence_and_writes_survive_a_killed_process, in a child
// process: applies writes with SyncPolicy::kNone and dies by SIGKILL with the
// database still open (no close, no destructors, no fsync).
BOOST_AUTO_TEST_CASE(crash_child_applies_without_close_then_is_killed, *boost::unit_test::disabled()) {
  auto& suite = boost::unit_test::framework::master_test_suite();
  BOOST_REQUIRE_EQUAL(suite.argc, 2);
  DatabaseOptions options;
  options.sync = SyncPolicy::kNone;
  auto s = open_store(suite.argv[1], options);
  for (int b = 0; b < kCrashChildBatches; ++b) {
    std::vector<ChpWrite> batch;
    for (int i = 0; i < kCrashChildBatchSize; ++i) {
      int n = b * kCrashChildBatchSize + i;
      batch.push_back(put(key_n(n), "value " + std::to_string(n), n % 2 == 0 ? 5000 + n : 0));
    }
    apply(*s, batch);
  }
  apply(*s, {del("before")});
  ::kill(::getpid(), SIGKILL);
}

BOOST_AUTO_TEST_CASE(last_sequence_and_writes_survive_a_killed_process) {
  TempDir dir;
  std::string data = (dir.path() / "data").string();
  {
    auto s = open_store(data);
    apply(*s, {put("before", "x"), put("kept", "y")});
    close_store(s);
  }
  std::string self = fs::read_symlink("/proc/self/exe").string();
  zstore::testing::Process child(self, {"--run_test="s + kCrashChildTest, "--log_level=error", "--", data},
                                 dir.path() / "child.log");
  int rc = child.wait(std::chrono::seconds(60));
  BOOST_REQUIRE_MESSAGE(rc == 128 + SIGKILL, "child ended with " << rc << ", log:\n" << child.log());

  constexpr int kWrites = kCrashChildBatches * kCrashChildBatchSize;
  auto s = open_store(data);
  BOOST_CHECK_EQUAL(s->last_sequence(), 2u + kWrites + 1u);
  BOOST_CHECK(!get(*s, "before"));
  BOOST_CHECK(get(*s, "kept"));
  for (int n = 0; n < kWrites; ++n) {
    auto e = get(*s, key_n(n));
    BOOST_REQUIRE_MESSAGE(e, key_n(n) << " lost");
    BOOST_CHECK_EQUAL(e->sequence, 3u + static_cast<std::uint64_t>(n));
    BOOST_CHECK_EQUAL(e->value, "value " + std::to_string(n));
  }
  BOOST_CHECK_EQUAL(expiry_index(*s.db).size(), static_cast<std::size_t>(kWrites / 2));
  BOOST_CHECK(apply(*s, {put("after", "z")}) == std::vector<std::uint64_t>{2u + kWrites + 2u});
}

BOOST_AUTO_TEST_CASE(delete_removes_the_key_and_still_consumes_a_sequence) {
  TempDir dir;
  auto s = open_store(dir.str());
  apply(*s, {put("a", "1", 100), put("b", "2")});
  BOOST_CHECK(apply(*s, {del("a")}) == std::vector<std::uint64_t>{3});
  BOOST_CHECK(!get(*s, "a"));
  BOOST_CHECK_EQUAL(s->last_sequence(), 3u);
  // Deleting a key that does not exist is still an update with a sequence.
  BOOST_CHECK(apply(*s, {del("never")}) == std::vector<std::uint64_t>{4});
  BOOST_CHECK(keys_under(*s, "") == std::vector<std::string>{"b"});
  close_store(s);
  s = open_store(dir.str());
  BOOST_CHECK_EQUAL(s->last_sequence(), 4u);
  BOOST_CHECK(!get(*s, "a"));
}

BOOST_AUTO_TEST_CASE(put_and_delete_of_one_key_in_one_batch_apply_in_order) {
  TempDir dir;
  auto s = open_store(dir.str());
  BOOST_CHECK(apply(*s, {put("k", "1"), del("k"), put("j", "1"), del("j"), put("j", "2")}) ==
              (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
  BOOST_CHECK(!get(*s, "k"));
  BOOST_CHECK_EQUAL(get(*s, "j")->sequence, 5u);
}

// apply() writes the map's side of a batch in key order, once per key: the
// last write of each key must win whatever the order of the batch.
BOOST_AUTO_TEST_CASE(last_write_of_each_key_wins_in_an_unordered_batch_with_repeats) {
  TempDir dir;
  auto s = open_store(dir.str());
  std::vector<ChpWrite> writes;
  std::map<std::string, std::string> expected;
  for (int round = 0; round < 5; ++round) {
    for (int k = 9; k >= 0; --k) {  // descending keys, each repeated per round
      std::string key = key_n((k * 7 + round) % 10);
      std::string value = round == 4 && k % 3 == 0 ? "" : "r" + std::to_string(round) + "k" + std::to_string(k);
      writes.push_back(put(key, value));
      expected[key] = value;
    }
  }
  auto sequences = apply(*s, writes);
  std::uint64_t live = 0;
  for (const auto& [key, value] : expected) {
    auto entry = get(*s, key);
    BOOST_CHECK_EQUAL(entry.has_value(), !value.empty());
    if (!entry) continue;
    ++live;
    BOOST_CHECK_EQUAL(entry->value, value);
    std::size_t last = 0;
    for (std::size_t i = 0; i < writes.size(); ++i) last = writes[i].key == key ? i : last;
    BOOST_CHECK_EQUAL(entry->sequence, sequences[last]);
  }
  BOOST_CHECK_EQUAL(s->live_keys(), live);
  BOOST_CHECK_EQUAL(keys_under(*s, "").size(), live);
}

BOOST_AUTO_TEST_CASE(explicit_sequences_above_last_are_accepted_and_move_the_counter) {
  TempDir dir;
  {
    auto s = open_store(dir.str());
    apply(*s, {put("a", "1")});
    BOOST_CHECK(apply(*s, {put("b", "2", 0, 10), put("c", "3"), put("d", "4", 0, 20)}) ==
                (std::vector<std::uint64_t>{10, 11, 20}));
    BOOST_CHECK_EQUAL(s->last_sequence(), 20u);
    BOOST_CHECK(apply(*s, {del("a", 21)}) == std::vector<std::uint64_t>{21});
    BOOST_CHECK_EQUAL(get(*s, "c")->sequence, 11u);
    close_store(s);
  }
  auto s = open_store(dir.str());
  BOOST_CHECK_EQUAL(s->last_sequence(), 21u);
  BOOST_CHECK(!get(*s, "a"));
}

BOOST_AUTO_TEST_CASE(explicit_sequence_at_or_below_last_is_rejected_with_nothing_applied) {
  TempDir dir;
  auto s = open_store(dir.str());
  apply(*s, {put("base", "1", 0, 20)});
  std::vector<std::vector<ChpWrite>> rejected = {
      {put("new", "1", 0, 20)},                           // equal to last
      {put("new", "1", 0, 5)},                            // below last
      {put("new", "1"), put("new2", "1", 0, 21)},         // the auto write took 21
      {put("new", "1", 0, 30), put("new2", "1", 0, 30)},  // not increasing
      {put("new", "1", 0, 30), put("new2", "1", 0, 25)},  // decreasing
      {put("new", "1", 100, 30), del("base", 1)},         // a delete, with a ttl write before it
  };
  for (auto& writes : rejected) {
    std::vector<std::uint64_t> given;
    for (const auto& w : writes) given.push_back(w.sequence);
    Status st = s->apply(writes);
    for (std::size_t i = 0; i < writes.size(); ++i) {
      BOOST_CHECK_EQUAL(writes[i].sequence, given[i]);  // none reported as used
    }
    BOOST_CHECK(!st.ok());
    BOOST_CHECK_MESSAGE(failure(st).find("not above") != std::string::npos, failure(st));
    BOOST_CHECK_EQUAL(s->last_sequence(), 20u);
    BOOST_CHECK(!get(*s, "new"));
    BOOST_CHECK(!get(*s, "new2"));
    BOOST_CHECK(get(*s, "base"));
  }
  BOOST_CHECK(expiry_index(*s.db).empty());
  close_store(s);
  s = open_store(dir.str());
  BOOST_CHECK_EQUAL(s->last_sequence(), 20u);
  BOOST_CHECK(apply(*s, {put("next", "1")}) == std::vector<std::uint64_t>{21});
}

BOOST_AUTO_TEST_CASE(apply_that_cannot_be_written_changes_nothing) {
  TempDir dir;
  {
    auto s = open_store(dir.str());
    apply(*s, {put("a", "1"), put("b", "2")});
    close_store(s);
  }
  DatabaseOptions ro;
  ro.read_only = true;
  auto s = open_store(dir.str(), ro);
  BOOST_CHECK_EQUAL(s->last_sequence(), 2u);
  std::vector<ChpWrite> writes = {put("c", "3"), del("a")};
  BOOST_CHECK(!s->apply(writes).ok());
  BOOST_CHECK_EQUAL(s->last_sequence(), 2u);
  BOOST_CHECK(!get(*s, "c"));
  BOOST_CHECK(get(*s, "a"));
  BOOST_CHECK_EQUAL(writes[0].sequence, 0u);  // not reported as used
  BOOST_CHECK_EQUAL(writes[1].sequence, 0u);
}

// ---- snapshots --------------------------------------------------------------

BOOST_AUTO_TEST_CASE(snapshot_cursor_keeps_its_point_in_time_view_while_writes_continue) {
  TempDir dir;
  auto s = open_store(dir.str());
  apply(*s, {put("a", "a1"), put("b", "b1"), put("c", "c1")});
  auto cursor = s->snapshot("");
  BOOST_CHECK_EQUAL(cursor->sequence(), 3u);

  // Read one record, then change everything around the cursor.
  ChpRecord first;
  BOOST_REQUIRE(cursor->next(&first));
  BOOST_CHECK_EQUAL(first.key, "a");
  apply(*s, {put("a", "a2"), del("b"), put("bb", "new"), put("c", "c2"), put("d", "d1")});
  BOOST_REQUIRE(s->clear().ok());

  auto rest = drain(*cursor);
  BOOST_REQUIRE_EQUAL(rest.size(), 2u);
  BOOST_CHECK_EQUAL(rest[0].key, "b");
  BOOST_CHECK(rest[0].entry == (ChpEntry{2, 0, "", "", "b1"}));
  BOOST_CHECK_EQUAL(rest[1].key, "c");
  BOOST_CHECK(rest[1].entry == (ChpEntry{3, 0, "", "", "c1"}));
  BOOST_CHECK_EQUAL(cursor->sequence(), 3u);
  cursor.reset();

  apply(*s, {put("e", "e1")});
  auto now = s->snapshot("");
  BOOST_CHECK_EQUAL(now->sequence(), 9u);
  auto records = drain(*now);
  BOOST_REQUIRE_EQUAL(records.size(), 1u);
  BOOST_CHECK_EQUAL(records[0].key, "e");
  BOOST_CHECK_EQUAL(records[0].entry.sequence, 9u);
}

BOOST_AUTO_TEST_CASE(two_cursors_taken_at_different_times_see_different_views) {
  TempDir dir;
  auto s = open_store(dir.str());
  apply(*s, {put("k", "old")});
  auto before = s->snapshot("k");
  apply(*s, {put("k", "new"), put("k2", "x")});
  auto after = s->snapshot("k");
  auto old_view = drain(*before);
  auto new_view = drain(*after);
  BOOST_REQUIRE_EQUAL(old_view.size(), 1u);
  BOOST_CHECK_EQUAL(old_view[0].entry.value, "old");
  BOOST_REQUIRE_EQUAL(new_view.size(), 2u);
  BOOST_CHECK_EQUAL(new_view[0].entry.value, "new");
  BOOST_CHECK_EQUAL(before->sequence(), 1u);
  BOOST_CHECK_EQUAL(after->sequence(), 3u);
}

BOOST_AUTO_TEST_CASE(snapshot_of_empty_store_yields_nothing) {
  TempDir dir;
  auto s = open_store(dir.str());
  auto cursor = s->snapshot("");
  BOOST_CHECK_EQUAL(cursor->sequence(), 0u);
  BOOST_CHECK(drain(*cursor).empty());
}

BOOST_AUTO_TEST_CASE(snapshot_prefix_selects_keys_starting_with_it_in_key_order) {
  TempDir dir;
  auto s = open_store(dir.str());
  apply(*s, {put("b", "1"), put("abc", "1"), put("a", "1"), put("ab", "1"), put("ac", "1"), put("aa", "1"),
             put("ab\xff", "1"), put("ab\0"s, "1"), put("", "empty key")});
  BOOST_CHECK(keys_under(*s, "ab") == (std::vector<std::string>{"ab", "ab\0"s, "abc", "ab\xff"}));
  BOOST_CHECK(keys_under(*s, "a") == (std::vector<std::string>{"a", "aa", "ab", "ab\0"s, "abc", "ab\xff", "ac"}));
  BOOST_CHECK(keys_under(*s, "abc") == std::vector<std::string>{"abc"});
  BOOST_CHECK(keys_under(*s, "abcd").empty());
  BOOST_CHECK(keys_under(*s, "c").empty());
  BOOST_CHECK(keys_under(*s, "0").empty());
}

BOOST_AUTO_TEST_CASE(snapshot_empty_prefix_yields_every_key_in_bytewise_order) {
  TempDir dir;
  auto s = open_store(dir.str());
  // Applied out of order; bytewise order treats bytes as unsigned.
  apply(*s, {put("\xff", "1"), put("\x80", "1"), put("\x7f", "1"), put("a", "1"), put("A", "1"), put("\0"s, "1"),
             put("", "1"), put("\0\0"s, "1"), put("\xff\xff\xff", "1")});
  BOOST_CHECK(keys_under(*s, "") ==
              (std::vector<std::string>{"", "\0"s, "\0\0"s, "A", "a", "\x7f", "\x80", "\xff", "\xff\xff\xff"}));
}

BOOST_AUTO_TEST_CASE(snapshot_prefix_of_ff_bytes_has_no_upper_bound_problem) {
  TempDir dir;
  auto s = open_store(dir.str());
  apply(*s, {put("\xfe\xff", "1"), put("\xff", "1"), put("\xff\x00"s, "1"), put("\xff\xff", "1"),
             put("\xff\xff\x00"s, "1"), put("\xff\xff\xff", "1"), put("\xff\xff\xff\xff", "1"), put("a\xff", "1"),
             put("a\xff\x01", "1"), put("b", "1"), put("a\xfe", "1")});
  BOOST_CHECK(keys_under(*s, "\xff\xff") ==
              (std::vector<std::string>{"\xff\xff", "\xff\xff\x00"s, "\xff\xff\xff", "\xff\xff\xff\xff"}));
  BOOST_CHECK(keys_under(*s, "\xff") == (std::vector<std::string>{"\xff", "\xff\x00"s, "\xff\xff", "\xff\xff\x00"s,
                                                                  "\xff\xff\xff", "\xff\xff\xff\xff"}));
  BOOST_CHECK(keys_under(*s, "a\xff") == (std::vector<std::string>{"a\xff", "a\xff\x01"}));
  BOOST_CHECK(keys_under(*s, "\xfe") == std::vector<std::string>{"\xfe\xff"});
  BOOST_CHECK(keys_under(*s, "\xff\xff\xff\xff\xff").empty());
}

BOOST_AUTO_TEST_CASE(binary_keys_with_nuls_are_distinct_and_prefix_filtered) {
  TempDir dir;
  auto s = open_store(dir.str());
  apply(*s, {put("a", "plain"), put("a\0"s, "one nul"), put("a\0b"s, "nul b"), put("a\0\0"s, "two nuls"),
             put("\0"s, "just nul")});
  BOOST_CHECK_EQUAL(get(*s, "a")->value, "plain");
  BOOST_CHECK_EQUAL(get(*s, "a\0"s)->value, "one nul");
  BOOST_CHECK_EQUAL(get(*s, "a\0b"s)->value, "nul b");
  BOOST_CHECK(keys_under(*s, "a\0"s) == (std::vector<std::string>{"a\0"s, "a\0\0"s, "a\0b"s}));
  BOOST_CHECK(keys_under(*s, "\0"s) == std::vector<std::string>{"\0"s});
  auto cursor = s->snapshot("a\0b"s);
  auto records = drain(*cursor);
  BOOST_REQUIRE_EQUAL(records.size(), 1u);
  BOOST_CHECK_EQUAL(records[0].key.size(), 3u);
  BOOST_CHECK_EQUAL(records[0].entry.value, "nul b");
}

BOOST_AUTO_TEST_CASE(snapshot_of_100k_keys_yields_every_key_once_in_order) {
  constexpr int kKeys = 100000;
  constexpr int kBatch = 10000;
  TempDir dir;
  DatabaseOptions options;
  options.sync = SyncPolicy::kNone;
  auto s = open_store(dir.str(), options);
  for (int b = 0; b < kKeys; b += kBatch) {
    std::vector<ChpWrite> batch;
    batch.reserve(kBatch);
    for (int i = b; i < b + kBatch; ++i) batch.push_back(put(key_n(i), "v"));
    apply(*s, std::move(batch));
  }
  BOOST_REQUIRE(s.db->db()->Flush(rocksdb::FlushOptions(), s.db->handle(Column::kChpMap)).ok());
  apply(*s, {put(key_n(kKeys), "one more, in the memtable")});

  auto cursor = s->snapshot("key");
  BOOST_CHECK_EQUAL(cursor->sequence(), static_cast<std::uint64_t>(kKeys + 1));
  ChpRecord r;
  int count = 0;
  bool in_order = true;
  while (cursor->next(&r)) {
    if (r.key != key_n(count) || r.entry.sequence != static_cast<std::uint64_t>(count + 1)) in_order = false;
    ++count;
  }
  BOOST_CHECK(cursor->status().ok());
  BOOST_CHECK(in_order);
  BOOST_CHECK_EQUAL(count, kKeys + 1);
}

// ---- clear, load, sequence administration -------------------------------------

BOOST_AUTO_TEST_CASE(clear_removes_every_key_and_index_entry_and_keeps_last_sequence) {
  constexpr int kKeys = 25000;  // more than one internal delete batch
  TempDir dir;
  {
    DatabaseOptions options;
    options.sync = SyncPolicy::kNone;
    auto s = open_store(dir.str(), options);
    std::vector<ChpWrite> writes;
    for (int i = 0; i < kKeys; ++i) writes.push_back(put(key_n(i), "v", i % 3 == 0 ? 1000 + i : 0));
    apply(*s, std::move(writes));
    BOOST_REQUIRE_EQUAL(s->last_sequence(), static_cast<std::uint64_t>(kKeys));

    BOOST_REQUIRE(s->clear().ok());
    BOOST_CHECK(keys_under(*s, "").empty());
    BOOST_CHECK(expiry_index(*s.db).empty());
    BOOST_CHECK(due(*s, std::numeric_limits<std::uint64_t>::max() - 1).empty());
    BOOST_CHECK_EQUAL(s->last_sequence(), static_cast<std::uint64_t>(kKeys));
    BOOST_CHECK(s->clear().ok());  // clearing an empty map is fine
    close_store(s);
  }
  auto s = open_store(dir.str());
  BOOST_CHECK(keys_under(*s, "").empty());
  BOOST_CHECK_EQUAL(s->last_sequence(), static_cast<std::uint64_t>(kKeys));
  BOOST_CHECK(apply(*s, {put("next", "v")}) == std::vector<std::uint64_t>{kKeys + 1});
}

BOOST_AUTO_TEST_CASE(load_stores_records_as_given_without_touching_the_counter) {
  TempDir dir;
  auto s = open_store(dir.str());
  apply(*s, {put("mine", "v")});
  std::vector<ChpRecord> records = {{"a", {500, 0, std::string(16, 'u'), "p=1\n", "va"}},
                                    {"b\0"s, {700, 250, "", "", "vb"}}};
  BOOST_REQUIRE(s->load(records).ok());
  BOOST_CHECK_EQUAL(s->last_sequence(), 1u);
  BOOST_CHECK(*get(*s, "a") == records[0].entry);
  BOOST_CHECK(*get(*s, "b\0"s) == records[1].entry);
  BOOST_CHECK(due(*s, 300) == (Dues{{"b\0"s, 250}}));
}

BOOST_AUTO_TEST_CASE(reset_sequence_and_begin_epoch_persist) {
  using zstore::storage::epoch_clock_base;
  const std::uint64_t now = 1'800'000'000'000;  // 2027
  TempDir dir;
  std::uint64_t base2 = 0;
  {
    auto s = open_store(dir.str());
    apply(*s, {put("a", "1")});
    BOOST_REQUIRE(s->reset_sequence(41).ok());
    BOOST_CHECK(apply(*s, {put("b", "1")}) == std::vector<std::uint64_t>{42});
    // The clock decides when it is ahead ...
    BOOST_REQUIRE(s->begin_epoch(0, now, 0).ok());
    BOOST_CHECK_EQUAL(s->last_sequence(), epoch_clock_base(now, 0));
    BOOST_CHECK(apply(*s, {put("x", "1")}) == std::vector<std::uint64_t>{epoch_clock_base(now, 0) + 1});
    // ... the peer's last sequence when that is ahead of it, and never
    // does a new epoch go back, even with the clock behind.
    base2 = epoch_clock_base(now + 60'000, 0);
    BOOST_REQUIRE(s->begin_epoch(base2, now, 0).ok());
    BOOST_CHECK_EQUAL(s->last_sequence(), base2);
    BOOST_REQUIRE(s->begin_epoch(0, now - 3'600'000, 0).ok());
    BOOST_CHECK_EQUAL(s->last_sequence(), base2 + 1);
    BOOST_CHECK_EQUAL(s->epochs().size(), 4u);
    close_store(s);
  }
  auto s = open_store(dir.str());
  BOOST_CHECK_EQUAL(s->last_sequence(), base2 + 1);
  BOOST_CHECK(apply(*s, {put("c", "1")}) == std::vector<std::uint64_t>{base2 + 2});
  zstore::storage::ChpEpochs expected = {
      {41, 42}, {epoch_clock_base(now, 0), epoch_clock_base(now, 0) + 1}, {base2, base2}, {base2 + 1, base2 + 2}};
  BOOST_CHECK(s->epochs() == expected);
}

// What a member hands its peer: every update after a sequence, deletes
// included, from the history; none once the history was trimmed past it.
BOOST_AUTO_TEST_CASE(history_holds_every_update_and_is_trimmed_to_its_bound) {
  TempDir dir;
  Opened o;
  BOOST_REQUIRE(Database::Open(dir.str(), {}, &o.db).ok());
  BOOST_REQUIRE(ChpStore::Open(o.db.get(), &o.store, 16).ok());
  apply(*o, {put("a", "1"), put("b", "2"), del("a"), put("c", "3", 99)});
  auto cursor = o->history_after(1);
  BOOST_REQUIRE(cursor);
  std::vector<std::pair<std::string, std::uint64_t>> seen;
  ChpRecord r;
  while (cursor->next(&r)) seen.emplace_back(r.key + "=" + r.entry.value, r.entry.sequence);
  BOOST_CHECK(cursor->status().ok());
  std::vector<std::pair<std::string, std::uint64_t>> expected = {{"b=2", 2}, {"a=", 3}, {"c=3", 4}};
  BOOST_CHECK(seen == expected);
  for (int i = 0; i < 40; ++i) apply(*o, {put("k" + std::to_string(i), "v")});
  BOOST_CHECK(!o->history_after(1));  // trimmed: 44 updates, at most 16 + 1 kept
  BOOST_CHECK_GE(o->history_from(), 44u - 17u);
  auto tail = o->history_after(40);
  BOOST_REQUIRE(tail);
  int n = 0;
  while (tail->next(&r)) ++n;
  BOOST_CHECK_EQUAL(n, 4);
  tail.reset();
  cursor.reset();
  close_store(o);
  // The bounds survive a restart.
  BOOST_REQUIRE(Database::Open(dir.str(), {}, &o.db).ok());
  BOOST_REQUIRE(ChpStore::Open(o.db.get(), &o.store, 16).ok());
  BOOST_CHECK(!o->history_after(1));
  BOOST_CHECK(o->history_after(40));
}

BOOST_AUTO_TEST_CASE(clear_empties_map_expiry_and_history_and_adopt_takes_the_leaders_epochs) {
  TempDir dir;
  auto s = open_store(dir.str());
  for (int i = 0; i < 1000; ++i) apply(*s, {put("k" + std::to_string(i), "v", 5000 + i)});
  BOOST_REQUIRE(s->clear().ok());
  BOOST_CHECK(!get(*s, "k1"));
  BOOST_CHECK(!get(*s, "k999"));
  BOOST_CHECK(due(*s, UINT64_MAX).empty());
  BOOST_CHECK(!s->history_after(0));
  BOOST_CHECK(!s->history_after(999));
  zstore::storage::ChpEpochs leader = {{0, 700}, {5000, 5010}};
  BOOST_REQUIRE(s->adopt(5010, leader).ok());
  BOOST_CHECK(s->epochs() == leader);
  BOOST_CHECK_EQUAL(s->last_sequence(), 5010u);
  BOOST_CHECK(s->history_after(5010));
  BOOST_CHECK(apply(*s, {put("n", "1")}) == std::vector<std::uint64_t>{5011});
  // A leader that sent no epochs: the past is unknown.
  BOOST_REQUIRE(s->adopt(9000, {}).ok());
  BOOST_CHECK(s->epochs() == (zstore::storage::ChpEpochs{{9000, 9000}}));
}

BOOST_AUTO_TEST_CASE(synced_flag_persists) {
  TempDir dir;
  {
    auto s = open_store(dir.str());
    BOOST_REQUIRE(s->set_synced(false).ok());
    BOOST_CHECK(!s->synced());
    close_store(s);
  }
  {
    auto s = open_store(dir.str());
    BOOST_CHECK(!s->synced());
    BOOST_REQUIRE(s->set_synced(true).ok());
    close_store(s);
  }
  auto s = open_store(dir.str());
  BOOST_CHECK(s->synced());
}

// Resume: only sequences of our own epochs, within the history, and only
// the keys of the subtree; a long run of other keys pauses the cursor
// instead of reading on in one call.
BOOST_AUTO_TEST_CASE(resume_after_covers_our_epochs_and_filters_the_subtree) {
  TempDir dir;
  auto s = open_store(dir.str());
  BOOST_REQUIRE(s->begin_epoch(0, 1'700'000'000'000, 7).ok());
  const std::uint64_t base = s->last_sequence();
  apply(*s, {put("/x/a", "1")});
  for (int i = 0; i < 5000; ++i) apply(*s, {put("/y/" + std::to_string(i), "v")});
  apply(*s, {put("/x/b", "2"), del("/x/a")});
  BOOST_CHECK(!s->resume_after(s->last_sequence() + 1, ""));  // beyond us
  BOOST_CHECK(!s->resume_after(base - 5, ""));                // not a point of our history
  BOOST_CHECK(s->resume_after(s->last_sequence(), ""));       // current: nothing to send

  auto cursor = s->resume_after(base + 1, "/x/");
  BOOST_REQUIRE(cursor);
  std::vector<std::string> seen;
  int pauses = 0;
  ChpRecord r;
  for (int calls = 0; calls < 100; ++calls) {
    if (cursor->next(&r)) {
      seen.push_back(r.key + "=" + r.entry.value);
    } else if (cursor->paused()) {
      ++pauses;
    } else {
      break;
    }
  }
  BOOST_CHECK(cursor->status().ok());
  BOOST_CHECK((seen == std::vector<std::string>{"/x/b=2", "/x/a="}));
  BOOST_CHECK_GE(pauses, 1);
}

namespace {
ChpWrite put_at(std::string key, std::uint64_t written_ms) {
  ChpWrite w = put(std::move(key), "v");
  w.written_ms = written_ms;
  return w;
}
}  // namespace

// The age bound (--chp-history-ms): entries written before the cutoff go,
// the rest stay; the floor survives a restart.
BOOST_AUTO_TEST_CASE(history_trim_by_age_drops_only_older_entries) {
  TempDir dir;
  auto s = open_store(dir.str());
  for (auto w : {put_at("a", 1000), put_at("b", 2000), put_at("c", 3000)}) apply(*s, {w});  // one entry each
  BOOST_REQUIRE(s->history_after(0));
  BOOST_REQUIRE(s->trim_history_older_than(2000).ok());
  BOOST_CHECK(!s->history_after(0));
  BOOST_CHECK_EQUAL(s->history_from(), 1u);
  auto rest = s->history_after(1);
  BOOST_REQUIRE(rest);
  ChpRecord r;
  std::vector<std::string> keys;
  while (rest->next(&r)) keys.push_back(r.key);
  BOOST_CHECK(keys == (std::vector<std::string>{"b", "c"}));
  rest.reset();
  BOOST_REQUIRE(s->trim_history_older_than(2000).ok());  // nothing more is old
  BOOST_CHECK_EQUAL(s->history_from(), 1u);
  close_store(s);
  s = open_store(dir.str());
  BOOST_CHECK(!s->history_after(0));
  BOOST_CHECK(s->history_after(1));
  BOOST_REQUIRE(s->trim_history_older_than(10'000).ok());
  BOOST_CHECK_EQUAL(s->history_from(), 3u);
  BOOST_CHECK(s->history_after(3));
}

// One trim call walks at most 4096 updates (it runs on the reactor); the
// next call goes on from there.
BOOST_AUTO_TEST_CASE(history_trim_by_age_is_bounded_per_call) {
  TempDir dir;
  auto s = open_store(dir.str());
  std::vector<ChpWrite> writes;
  for (int i = 0; i < 10'000; ++i) writes.push_back(put_at("k" + std::to_string(i), 10));
  apply(*s, std::move(writes));
  // Whole blocks (chp_history.h) of at most the slack (2048 updates at the
  // default bound): each call drops between 4096 - 2048 and 4096.
  std::uint64_t before = 0;
  for (int call = 0; call < 2; ++call) {
    BOOST_REQUIRE(s->trim_history_older_than(100).ok());
    BOOST_CHECK_LE(s->history_from() - before, 4'096u);
    BOOST_CHECK_GE(s->history_from() - before, 2'048u);
    before = s->history_from();
  }
  for (int call = 0; call < 3; ++call) BOOST_REQUIRE(s->trim_history_older_than(100).ok());
  BOOST_CHECK_EQUAL(s->history_from(), 10'000u);
}

// The trims walk an iterator they keep for a while (kept_iterator.h), whose
// view is older than the history's newest entries: a walk that runs out of
// it must go on in a new one, or a count bound stops holding while entries
// come one at a time.
BOOST_AUTO_TEST_CASE(history_count_bound_holds_with_one_update_per_apply) {
  TempDir dir;
  Opened o;
  BOOST_REQUIRE(Database::Open(dir.str(), {}, &o.db).ok());
  BOOST_REQUIRE(ChpStore::Open(o.db.get(), &o.store, 16).ok());
  for (std::uint64_t i = 1; i <= 500; ++i) {
    apply(*o, {put("k" + std::to_string(i % 7), "v")});
    BOOST_REQUIRE_GE(o->history_from() + 16 + 1, i);  // at most the bound and its slack of 1
  }
}

// clear() empties the history; the iterator the trims kept saw it full, and
// must not lead a later trim to entries that are gone (here: blocks of 5
// updates each, where the history now holds one update per entry).
BOOST_AUTO_TEST_CASE(history_trims_after_clear_walk_the_new_history) {
  TempDir dir;
  Opened o;
  BOOST_REQUIRE(Database::Open(dir.str(), {}, &o.db).ok());
  BOOST_REQUIRE(ChpStore::Open(o.db.get(), &o.store, 16).ok());
  for (int b = 0; b < 20; ++b) {
    std::vector<ChpWrite> block;
    for (int i = 0; i < 5; ++i) block.push_back(put("k" + std::to_string(i), "v"));
    apply(*o, std::move(block));
  }
  BOOST_REQUIRE_GT(o->history_from(), 0u);  // trimmed: the trims keep an iterator now
  BOOST_REQUIRE(o->clear().ok());
  BOOST_REQUIRE(o->adopt(10, {}).ok());
  for (std::uint64_t seq = 11; seq <= 60; ++seq) {
    apply(*o, {put("n" + std::to_string(seq), "v")});
    BOOST_REQUIRE_GE(o->history_from() + 16 + 1, seq);
  }
  auto rest = o->history_after(o->history_from());
  BOOST_REQUIRE(rest);
  ChpRecord r;
  std::uint64_t expected = o->history_from() + 1;
  while (rest->next(&r)) BOOST_CHECK_EQUAL(r.entry.sequence, expected++);
  BOOST_CHECK(rest->status().ok());
  BOOST_CHECK_EQUAL(expected, 61u);
}

// The reactor calls release_idle_trim_reader() every turn: once the kept
// iterator is old, the history's older versions (memtables, tables) it
// pinned are let go, though no trim came since.
BOOST_AUTO_TEST_CASE(an_idle_trim_reader_is_released_and_unpins_the_history) {
  TempDir dir;
  Opened o;
  BOOST_REQUIRE(Database::Open(dir.str(), {}, &o.db).ok());
  BOOST_REQUIRE(ChpStore::Open(o.db.get(), &o.store, 16).ok());
  for (int i = 0; i < 40; ++i) apply(*o, {put("k" + std::to_string(i), "v")});
  BOOST_REQUIRE_GT(o->history_from(), 0u);
  auto* history = o.db->handle(Column::kChpHistory);
  auto versions = [&] {
    std::uint64_t n = 0;
    BOOST_REQUIRE(o.db->db()->GetIntProperty(history, "rocksdb.num-live-versions", &n));
    return n;
  };
  BOOST_REQUIRE(o.db->db()->Flush(rocksdb::FlushOptions(), history).ok());
  BOOST_CHECK_EQUAL(versions(), 2u);  // the trims' iterator holds the version before the flush
  zstore::testing::wait_until(
      [&] {
        o->release_idle_trim_reader();
        return versions() <= 1;
      },
      std::chrono::seconds(10));
  BOOST_CHECK_EQUAL(versions(), 1u);
}

// Repeats of a key in one batch: each write sees what the previous write
// of its key in the batch left, so the key count and the TTL index stay
// exact (one index entry per key with a TTL, its latest expiry).
BOOST_AUTO_TEST_CASE(many_repeats_in_one_batch_keep_the_count_and_ttl_index_exact) {
  TempDir dir;
  auto s = open_store(dir.str());
  std::vector<ChpWrite> writes;
  for (int i = 0; i < 3000; ++i) {
    std::string key = "k" + std::to_string(i % 97);
    if (i % 7 == 3) {
      writes.push_back(del(key));
    } else {
      writes.push_back(put(key, "v" + std::to_string(i), 10'000 + static_cast<std::uint64_t>(i)));
    }
  }
  std::map<std::string, std::uint64_t> model;  // key -> expiry of its last write, if a put
  for (const auto& w : writes) {
    if (w.value.empty()) {
      model.erase(w.key);
    } else {
      model[w.key] = w.expires_at_ms;
    }
  }
  apply(*s, writes);
  BOOST_CHECK_EQUAL(s->live_keys(), model.size());
  auto listed = expiry_index(*s.db);
  BOOST_REQUIRE_EQUAL(listed.size(), model.size());
  for (const auto& [expires, key] : listed) {
    auto it = model.find(key);
    BOOST_REQUIRE(it != model.end());
    BOOST_CHECK_EQUAL(expires, it->second);
  }
}

// apply() reuses its batch's buffer, but not one grown past 1 MiB.
BOOST_AUTO_TEST_CASE(apply_keeps_its_batch_buffer_unless_it_grew_past_a_mebibyte) {
  TempDir dir;
  auto s = open_store(dir.str());
  std::vector<ChpWrite> small;
  for (int i = 0; i < 500; ++i) small.push_back(put("s" + std::to_string(i), std::string(200, 'x')));
  apply(*s, small);
  BOOST_CHECK_GE(s->kept_batch_capacity(), 500u * 200u);
  std::vector<ChpWrite> large;
  for (int i = 0; i < 40; ++i) large.push_back(put("l" + std::to_string(i), std::string(64 << 10, 'y')));
  apply(*s, large);
  BOOST_CHECK_LT(s->kept_batch_capacity(), 4096u);
  apply(*s, {put("a", "1")});
  BOOST_CHECK(get(*s, "l39"));
}

// ---- the map side of a batch -------------------------------------------

namespace {

// What a WriteBatch holds, in order: column family id, 'P'ut or 'D'elete, key, value.
struct Recorded {
  std::uint32_t column;
  char op;
  std::string key;
  std::string value;
};

class Recorder : public rocksdb::WriteBatch::Handler {
 public:
  std::vector<Recorded> ops;
  rocksdb::Status PutCF(std::uint32_t cf, const rocksdb::Slice& key, const rocksdb::Slice& value) override {
    ops.push_back({cf, 'P', key.ToString(), value.ToString()});
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteCF(std::uint32_t cf, const rocksdb::Slice& key) override {
    ops.push_back({cf, 'D', key.ToString(), ""});
    return rocksdb::Status::OK();
  }
};

}  // namespace

// put_map_in_key_order (ChpStore::apply's map side, and zstore-bench's
// floor): in key order, a key's last write only, an empty value a delete,
// each entry encoded with its sequence and expiry.
BOOST_AUTO_TEST_CASE(map_side_of_a_batch_is_in_key_order_with_last_writes_only) {
  TempDir dir;
  auto s = open_store(dir.str());
  auto* map = s.db->handle(Column::kChpMap);
  std::vector<ChpWrite> writes = {put("c", "1", 0, 1), put("a", "2", 0, 2), put("c", "3", 77, 3),
                                  del("b", 4),         put("a", "", 0, 5),  put("d", "6", 0, 6)};
  rocksdb::WriteBatch batch;
  zstore::storage::put_map_in_key_order(batch, map, writes);
  Recorder recorder;
  BOOST_REQUIRE(batch.Iterate(&recorder).ok());
  BOOST_REQUIRE_EQUAL(recorder.ops.size(), 4u);
  std::string keys, ops;
  for (const auto& r : recorder.ops) {
    BOOST_CHECK_EQUAL(r.column, map->GetID());
    keys += r.key;
    ops += r.op;
  }
  BOOST_CHECK_EQUAL(keys, "abcd");
  BOOST_CHECK_EQUAL(ops, "DDPP");
  ChpEntry c;
  BOOST_REQUIRE(zstore::storage::decode_chp_entry(recorder.ops[2].value, &c));
  BOOST_CHECK_EQUAL(c.sequence, 3u);
  BOOST_CHECK_EQUAL(c.expires_at_ms, 77u);
  BOOST_CHECK_EQUAL(c.value, "3");
  ChpEntry d;
  BOOST_REQUIRE(zstore::storage::decode_chp_entry(recorder.ops[3].value, &d));
  BOOST_CHECK_EQUAL(d.sequence, 6u);
  BOOST_CHECK_EQUAL(d.value, "6");
}

// The sort compares the keys' first 16 bytes as numbers: keys around that
// length, sharing it, holding zero and 0xff bytes, prefixes of each other,
// must come out in std::string's order, the last write of each winning.
BOOST_AUTO_TEST_CASE(map_side_orders_keys_around_the_sorts_prefix_as_bytes_do) {
  TempDir dir;
  auto s = open_store(dir.str());
  auto* map = s.db->handle(Column::kChpMap);
  std::uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(state >> 33);
  };
  const std::string stem = "0123456789abcdef";  // the sort's prefix exactly
  const char tails[] = {'\0', '\x01', 'a', '\x7f', '\x80', '\xff'};
  std::vector<ChpWrite> writes;
  std::map<std::string, std::uint64_t> expected;  // key -> the sequence of its last write
  for (std::uint64_t seq = 1; seq <= 3000; ++seq) {
    std::string key = stem.substr(0, 8 + next() % 9);  // 8..16 bytes of the stem
    for (std::uint32_t extra = next() % 4; extra > 0; --extra) key += tails[next() % sizeof tails];
    if (next() % 5 == 0) key[next() % key.size()] = tails[next() % sizeof tails];
    writes.push_back(put(key, "v" + std::to_string(seq), 0, seq));
    expected[key] = seq;
  }
  rocksdb::WriteBatch batch;
  zstore::storage::put_map_in_key_order(batch, map, writes);
  Recorder recorder;
  BOOST_REQUIRE(batch.Iterate(&recorder).ok());
  BOOST_REQUIRE_EQUAL(recorder.ops.size(), expected.size());
  auto want = expected.begin();
  for (const auto& r : recorder.ops) {
    BOOST_REQUIRE(r.key == want->first);
    ChpEntry e;
    BOOST_REQUIRE(zstore::storage::decode_chp_entry(r.value, &e));
    BOOST_CHECK_EQUAL(e.sequence, want->second);
    ++want;
  }
}
