// CHP history references (chp_history.h, layout 3): a set's value is kept
// in chp_map only; a resolved cursor reads it at its point in time, leaves
// out sets overwritten since and turns sets deleted since into deletes
// without their uuid, marked superseded; an updates-only cursor gives
// every update without values; entries of layouts 1 and 2 are read beside references; damaged
// references are errors.
#include <boost/test/unit_test.hpp>

#include "protocol/byte_order.h"
#include "storage/chp/chp_entry.h"
#include "storage/chp/chp_history.h"
#include "tests/storage/chp/chp_store_fixture.h"
#include "tests/support/test_support.h"

using namespace chp_store_fixture;
using zstore::testing::TempDir;

namespace {

ChpWrite set(std::string key, std::string value, std::string uuid, std::uint64_t written_ms = 0) {
  ChpWrite w = put(std::move(key), std::move(value));
  w.uuid = std::move(uuid);
  w.written_ms = written_ms;
  return w;
}

ChpWrite remove(std::string key, std::string uuid, std::uint64_t written_ms = 0) {
  return set(std::move(key), "", std::move(uuid), written_ms);
}

// (key, sequence, uuid, value) of a record, compared whole.
using Seen = std::tuple<std::string, std::uint64_t, std::string, std::string>;

std::vector<Seen> seen(std::unique_ptr<ChpSnapshotCursor> cursor) {
  BOOST_REQUIRE(cursor);
  std::vector<Seen> out;
  for (auto& r : drain(*cursor)) out.emplace_back(r.key, r.entry.sequence, r.entry.uuid, r.entry.value);
  return out;
}

std::size_t history_bytes(Database& db) {
  std::size_t bytes = 0;
  std::unique_ptr<rocksdb::Iterator> it(db.db()->NewIterator(rocksdb::ReadOptions(), db.handle(Column::kChpHistory)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) bytes += it->key().size() + it->value().size();
  BOOST_REQUIRE(it->status().ok());
  return bytes;
}

void put_history(Database& db, std::string_view key, std::string_view value) {
  BOOST_REQUIRE(db.db()->Put(rocksdb::WriteOptions(), db.handle(Column::kChpHistory), key, value).ok());
}

void delete_history(Database& db, std::string_view key) {
  BOOST_REQUIRE(db.db()->Delete(rocksdb::WriteOptions(), db.handle(Column::kChpHistory), key).ok());
}

std::string history_key(std::uint64_t last, std::optional<char> tag) {
  std::string key;
  zstore::protocol::put_be<std::uint64_t>(key, last);
  if (tag) key += *tag;
  return key;
}

// An update as layouts 1 and 2 store it: the whole chp_map entry.
std::string old_update(std::uint64_t written_ms, const std::string& key, const ChpEntry& entry) {
  std::string out;
  zstore::protocol::put_be<std::uint64_t>(out, written_ms);
  zstore::protocol::put_be<std::uint32_t>(out, static_cast<std::uint32_t>(key.size()));
  out += key;
  out += zstore::storage::encode_chp_entry(entry);
  return out;
}

// A set as layout 3 stores it: a reference to chp_map, with its uuid.
std::string reference(std::uint64_t written_ms, const std::string& key, std::uint64_t sequence,
                      const std::string& uuid) {
  std::string out;
  zstore::protocol::put_be<std::uint64_t>(out, written_ms);
  zstore::protocol::put_be<std::uint32_t>(out, static_cast<std::uint32_t>(key.size()));
  out += key;
  out += '\x01';
  zstore::protocol::put_be<std::uint64_t>(out, sequence);
  out += static_cast<char>(uuid.size());
  out += uuid;
  return out;
}

std::string packed(const std::vector<std::string>& items) {
  std::string out;
  zstore::protocol::put_be<std::uint32_t>(out, static_cast<std::uint32_t>(items.size()));
  for (const auto& item : items) {
    zstore::protocol::put_be<std::uint32_t>(out, static_cast<std::uint32_t>(item.size()));
    out += item;
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(sets_keep_their_values_in_the_map_only_and_come_back_whole) {
  TempDir dir;
  auto o = open_store(dir.str());
  std::vector<ChpWrite> writes;
  for (int i = 0; i < 50; ++i) {
    ChpWrite w = set(key_n(i), std::string(1000, static_cast<char>('a' + i % 26)), "uuid-" + std::to_string(i), 77);
    w.properties = "ttl=60\n";
    w.expires_at_ms = 4'000'000'000'000 + i;
    writes.push_back(std::move(w));
  }
  apply(*o, writes);
  // One entry (9-byte key, count) of 50 x (kind, sequence step, time step,
  // key length: a byte each here; the 11-byte key): no value, uuid,
  // properties or expiry, nowhere near the 50 KB of values.
  BOOST_CHECK_LE(history_bytes(*o.db), 9 + 4 + 50u * (4 + 11) + 1);
  auto cursor = o->history_after(0);
  BOOST_REQUIRE(cursor);
  auto records = drain(*cursor);
  BOOST_REQUIRE_EQUAL(records.size(), 50u);
  for (std::size_t i = 0; i < records.size(); ++i) {
    BOOST_CHECK_EQUAL(records[i].key, writes[i].key);
    BOOST_CHECK(!records[i].value_omitted);
    BOOST_CHECK_EQUAL(records[i].written_ms, 77u);
    auto stored = get(*o, writes[i].key);
    BOOST_REQUIRE(stored);
    BOOST_CHECK(records[i].entry == *stored);
    BOOST_CHECK_EQUAL(records[i].entry.value, writes[i].value);
    BOOST_CHECK_EQUAL(records[i].entry.properties, "ttl=60\n");
    BOOST_CHECK_EQUAL(records[i].entry.expires_at_ms, writes[i].expires_at_ms);
  }
}

BOOST_AUTO_TEST_CASE(a_set_overwritten_since_is_left_out_and_the_later_one_follows) {
  TempDir dir;
  auto o = open_store(dir.str());
  apply(*o, {set("a", "v1", "u1")});                       // 1
  apply(*o, {set("b", "x", "u2"), set("a", "v2", "u3")});  // 2, 3
  apply(*o, {set("c", "y", "u4"), set("c", "z", "u5")});   // 4, 5: one key twice in one batch
  std::vector<Seen> all{{"b", 2, "u2", "x"}, {"a", 3, "u3", "v2"}, {"c", 5, "u5", "z"}};
  BOOST_CHECK(seen(o->history_after(0)) == all);
  BOOST_CHECK(seen(o->resume_after(2, "a")) == std::vector<Seen>({{"a", 3, "u3", "v2"}}));
  BOOST_CHECK(seen(o->history_after(3)) == std::vector<Seen>({{"c", 5, "u5", "z"}}));
}

// A client resuming ends with the key absent; the set comes without its
// UUID (that names a published value) but marked superseded, so a peer
// reconciling with us still weighs the client's write.
BOOST_AUTO_TEST_CASE(a_set_deleted_since_comes_as_a_superseded_delete_before_the_delete) {
  TempDir dir;
  auto o = open_store(dir.str());
  apply(*o, {set("a", "v1", "u1"), set("e", "v", "u2")});  // 1, 2
  apply(*o, {remove("a", "u3")});                          // 3: a client delete
  apply(*o, {remove("e", "")});                            // 4: an expiry (no uuid)
  std::vector<Seen> expected{{"a", 1, "", ""}, {"e", 2, "", ""}, {"a", 3, "u3", ""}, {"e", 4, "", ""}};
  BOOST_CHECK(seen(o->history_after(0)) == expected);
  auto cursor = o->history_after(0);
  BOOST_REQUIRE(cursor);
  std::vector<bool> superseded;
  for (auto& r : drain(*cursor)) superseded.push_back(r.superseded);
  BOOST_CHECK(superseded == std::vector<bool>({true, true, false, false}));
  BOOST_CHECK(!get(*o, "a"));
  BOOST_CHECK(!get(*o, "e"));
}

BOOST_AUTO_TEST_CASE(a_cursor_reads_the_values_of_its_point_in_time) {
  TempDir dir;
  auto o = open_store(dir.str());
  apply(*o, {set("a", "v1", "u1"), set("b", "w1", "u2")});  // 1, 2
  auto cursor = o->history_after(0);
  apply(*o, {set("a", "v2", "u3"), remove("b", "u4")});  // 3, 4: after the cursor was taken
  BOOST_CHECK(seen(std::move(cursor)) == std::vector<Seen>({{"a", 1, "u1", "v1"}, {"b", 2, "u2", "w1"}}));
  BOOST_CHECK(seen(o->history_after(0)) ==
              std::vector<Seen>({{"b", 2, "", ""}, {"a", 3, "u3", "v2"}, {"b", 4, "u4", ""}}));
}

BOOST_AUTO_TEST_CASE(an_updates_only_cursor_gives_every_update_without_values) {
  TempDir dir;
  auto o = open_store(dir.str());
  apply(*o, {set("a", "v1", "u1", 100), set("a", "v2", "u2", 200)});  // 1, 2
  apply(*o, {remove("a", "u3", 300), set("b", "w", "u4", 400)});      // 3, 4
  auto cursor = o->history_updates_after(1);
  BOOST_REQUIRE(cursor);
  auto records = drain(*cursor);
  BOOST_REQUIRE_EQUAL(records.size(), 3u);
  struct Want {
    std::string key;
    std::uint64_t sequence;
    std::string uuid;
    std::uint64_t written_ms;
    bool omitted;
  };
  // A set's uuid stays in chp_map (layout 4): an omitted value omits it too.
  std::vector<Want> want{{"a", 2, "", 200, true}, {"a", 3, "u3", 300, false}, {"b", 4, "", 400, true}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    BOOST_TEST_CONTEXT("record " << i) {
      BOOST_CHECK_EQUAL(records[i].key, want[i].key);
      BOOST_CHECK_EQUAL(records[i].entry.sequence, want[i].sequence);
      BOOST_CHECK_EQUAL(records[i].entry.uuid, want[i].uuid);
      BOOST_CHECK_EQUAL(records[i].written_ms, want[i].written_ms);
      BOOST_CHECK_EQUAL(records[i].value_omitted, want[i].omitted);
      BOOST_CHECK(records[i].entry.value.empty());
    }
  }
}

// A database upgraded from layout 3, 2 or 1 keeps its older entries
// (whole entries in layouts 1 and 2, references with their uuid in 3)
// until trims drop them; readers and trims take every layout.
BOOST_AUTO_TEST_CASE(entries_of_older_layouts_are_read_beside_references) {
  TempDir dir;
  auto o = open_store(dir.str());
  apply(*o, {set("a", "map-a", "u1")});                           // 1
  apply(*o, {set("b", "map-b", "u2"), set("c", "map-c", "u3")});  // 2, 3
  apply(*o, {set("d", "map-d", "u4", 1500)});                     // 4
  // Replace them with what layouts 1, 2 and 3 wrote: values of their own
  // in 1 and 2, so what the cursor gives shows which entries it read.
  for (std::uint64_t last : {1, 3, 4}) {
    delete_history(*o.db, history_key(last, zstore::storage::kHistoryCompactBlockTag));
  }
  put_history(*o.db, history_key(1, std::nullopt), old_update(1000, "a", {1, 0, "u1", "", "old-a"}));
  put_history(*o.db, history_key(3, zstore::storage::kHistoryBlockTag),
              packed({old_update(1000, "b", {2, 0, "u2", "", "old-b"}), old_update(1000, "c", {3, 0, "u3", "", ""})}));
  put_history(*o.db, history_key(4, zstore::storage::kHistoryRefBlockTag), packed({reference(1500, "d", 4, "u4")}));
  apply(*o, {set("b", "new-b", "u5", 5000)});  // 5
  std::vector<Seen> expected{{"a", 1, "u1", "old-a"},
                             {"b", 2, "u2", "old-b"},
                             {"c", 3, "u3", ""},
                             {"d", 4, "u4", "map-d"},
                             {"b", 5, "u5", "new-b"}};
  BOOST_CHECK(seen(o->history_after(0)) == expected);
  // Whole entries as stored; references without values, with the uuid in
  // layout 3 and none in layout 4.
  std::vector<Seen> updates{
      {"a", 1, "u1", "old-a"}, {"b", 2, "u2", "old-b"}, {"c", 3, "u3", ""}, {"d", 4, "u4", ""}, {"b", 5, "", ""}};
  BOOST_CHECK(seen(o->history_updates_after(0)) == updates);
  BOOST_REQUIRE(o->trim_history_older_than(2000).ok());
  BOOST_CHECK_EQUAL(o->history_from(), 4u);
  BOOST_CHECK(seen(o->history_after(4)) == std::vector<Seen>({{"b", 5, "u5", "new-b"}}));
}

BOOST_AUTO_TEST_CASE(a_damaged_reference_is_an_error) {
  auto read_all = [](ChpStore& store) {
    auto cursor = store.history_after(0);
    BOOST_REQUIRE(cursor);
    ChpRecord r;
    while (cursor->next(&r) || cursor->paused()) {
    }
    return cursor->status();
  };
  TempDir dir;
  auto o = open_store(dir.str());
  apply(*o, {set("a", "v", "u1")});  // 1
  BOOST_REQUIRE(read_all(*o).ok());
  std::string update;
  zstore::protocol::put_be<std::uint64_t>(update, 0);
  zstore::protocol::put_be<std::uint32_t>(update, 1);
  update += "a";
  std::string ref = update + '\x01';
  zstore::protocol::put_be<std::uint64_t>(ref, 9);  // chp_map holds "a" at 1
  ref += '\x02';
  ref += "u1";
  auto key = history_key(1, zstore::storage::kHistoryRefBlockTag);
  put_history(*o.db, key, packed({ref}));
  Status s = read_all(*o);
  BOOST_CHECK(!s.ok());
  BOOST_CHECK_MESSAGE(s.message().find("refers to sequence 9") != std::string::npos, s.message());
  put_history(*o.db, key, packed({update + '\x07'}));  // an unknown kind
  BOOST_CHECK(!read_all(*o).ok());
  put_history(*o.db, key, packed({ref.substr(0, ref.size() - 1)}));  // uuid shorter than its length
  BOOST_CHECK(!read_all(*o).ok());
}
