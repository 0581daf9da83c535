// A key's history (ChpStore::key_history, chp_versions.h): its versions
// newest first with the values of older sets, deletes and expiries, the
// limit, trims that keep chp_versions and chp_history the same, clear, a
// reopen, and a database written before chp_versions.
#include <rocksdb/db.h>
#include <rocksdb/iterator.h>

#include <boost/test/unit_test.hpp>
#include <set>
#include <tuple>

#include "storage/chp/chp_history.h"
#include "storage/chp/chp_versions.h"
#include "tests/storage/chp/chp_store_fixture.h"
#include "tests/support/test_support.h"

using namespace chp_store_fixture;
using zstore::storage::ChpVersion;
using zstore::testing::TempDir;

namespace {

constexpr bool kOn = true;  // ChpStore::Open's key_history (zstored --chp-key-history)
constexpr std::size_t kIndexBytes = zstore::storage::ChpKeyIndex::kDefaultMaxBytes;

ChpWrite set(std::string key, std::string value, std::uint64_t written_ms, std::string uuid = std::string(16, 'u')) {
  ChpWrite w = put(std::move(key), std::move(value));
  w.uuid = std::move(uuid);
  w.written_ms = written_ms;
  return w;
}

std::vector<ChpVersion> history(ChpStore& store, std::string_view key, std::size_t limit = 64) {
  std::vector<ChpVersion> out;
  Status s = store.key_history(key, limit, &out);
  BOOST_REQUIRE_MESSAGE(s.ok(), failure(s));
  return out;
}

// (sequence, value) of each version.
std::vector<std::pair<std::uint64_t, std::string>> seen(const std::vector<ChpVersion>& versions) {
  std::vector<std::pair<std::uint64_t, std::string>> out;
  for (const auto& v : versions) out.emplace_back(v.entry.sequence, v.entry.value);
  return out;
}

// Every (key, sequence) of chp_versions.
std::set<std::pair<std::string, std::uint64_t>> all_versions(Database& db) {
  std::set<std::pair<std::string, std::uint64_t>> out;
  std::unique_ptr<rocksdb::Iterator> it(db.db()->NewIterator(rocksdb::ReadOptions(), db.handle(Column::kChpVersions)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string_view key;
    std::uint64_t sequence = 0;
    BOOST_REQUIRE(
        zstore::storage::decode_version_key(std::string_view(it->key().data(), it->key().size()), &key, &sequence));
    out.emplace(std::string(key), sequence);
  }
  BOOST_REQUIRE(it->status().ok());
  return out;
}

// Every (key, sequence) of the history after history_from().
std::set<std::pair<std::string, std::uint64_t>> all_history(ChpStore& store) {
  std::set<std::pair<std::string, std::uint64_t>> out;
  auto cursor = store.history_updates_after(store.history_from());
  BOOST_REQUIRE(cursor);
  for (auto& r : drain(*cursor)) out.emplace(r.key, r.entry.sequence);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(versions_come_newest_first_with_the_values_of_older_sets) {
  TempDir dir;
  auto o = open_store(dir.str(), {}, kOn);
  std::vector<std::uint64_t> seqs;
  for (int i = 1; i <= 5; ++i) {
    seqs.push_back(apply(*o, {set("/k", "v" + std::to_string(i), 1000 + i)})[0]);
    apply(*o, {set("/k2", "other", 2000 + i), set("/k/sub", "prefixed", 3000 + i)});  // neither is /k
  }
  seqs.push_back(apply(*o, {set("/k", "", 1006)})[0]);  // a client's delete (it has a uuid)
  auto got = history(*o, "/k");
  std::vector<std::pair<std::uint64_t, std::string>> want = {{seqs[5], ""},   {seqs[4], "v5"}, {seqs[3], "v4"},
                                                             {seqs[2], "v3"}, {seqs[1], "v2"}, {seqs[0], "v1"}};
  BOOST_TEST((seen(got) == want));
  BOOST_REQUIRE(got.size() == 6u);
  BOOST_TEST(got[0].written_ms == 1006u);
  BOOST_TEST(got[0].entry.uuid == std::string(16, 'u'));  // a delete with a uuid: not an expiry
  BOOST_TEST(got[5].written_ms == 1001u);
  BOOST_TEST(history(*o, "/nothing").empty());
  BOOST_TEST(history(*o, "/k/sub").size() == 5u);
}

BOOST_AUTO_TEST_CASE(the_limit_keeps_the_newest_versions) {
  TempDir dir;
  auto o = open_store(dir.str(), {}, kOn);
  std::vector<ChpWrite> writes;
  for (int i = 1; i <= 10; ++i) writes.push_back(set("/k", "v" + std::to_string(i), i));
  auto seqs = apply(*o, writes);  // one batch: ten versions of one key
  auto got = history(*o, "/k", 3);
  std::vector<std::pair<std::uint64_t, std::string>> want = {{seqs[9], "v10"}, {seqs[8], "v9"}, {seqs[7], "v8"}};
  BOOST_TEST((seen(got) == want));
  BOOST_TEST(history(*o, "/k", 1000).size() == 10u);
}

BOOST_AUTO_TEST_CASE(an_expiry_is_a_version_without_uuid_and_a_ttl_is_kept) {
  TempDir dir;
  auto o = open_store(dir.str(), {}, kOn);
  ChpWrite w = set("/t", "lease", 10);
  w.expires_at_ms = 5000;
  w.properties = "ttl=5\n";
  apply(*o, {w});
  auto dues = due(*o, 6000);
  BOOST_REQUIRE(dues.size() == 1u);
  apply(*o, {set("/t", "", 6000, "")});  // what the server's sweep writes
  auto got = history(*o, "/t");
  BOOST_REQUIRE(got.size() == 2u);
  BOOST_TEST(got[0].entry.value.empty());
  BOOST_TEST(got[0].entry.uuid.empty());
  BOOST_TEST(got[1].entry.value == "lease");
  BOOST_TEST(got[1].entry.expires_at_ms == 5000u);
  BOOST_TEST(got[1].entry.properties == "ttl=5\n");
}

BOOST_AUTO_TEST_CASE(versions_survive_a_reopen) {
  TempDir dir;
  std::vector<std::uint64_t> seqs;
  {
    auto o = open_store(dir.str(), {}, kOn);
    // As a server starts: an epoch list, so the history's start is stored
    // (a store without one takes its last sequence as that start at open).
    BOOST_REQUIRE(o->begin_epoch(0, 1764666704000, 0).ok());
    seqs = apply(*o, {set("/k", "a", 1), set("/k", "b", 2)});
    close_store(o);
  }
  auto o = open_store(dir.str(), {}, kOn);
  std::vector<std::pair<std::uint64_t, std::string>> want = {{seqs[1], "b"}, {seqs[0], "a"}};
  BOOST_TEST((seen(history(*o, "/k")) == want));
}

BOOST_AUTO_TEST_CASE(trims_drop_versions_with_their_history_entries) {
  TempDir dir;
  Opened o;
  BOOST_REQUIRE(Database::Open(dir.str(), {}, &o.db).ok());
  BOOST_REQUIRE(ChpStore::Open(o.db.get(), &o.store, 32, kIndexBytes, kOn).ok());
  for (int i = 0; i < 300; ++i) {
    apply(*o, {set("/k" + std::to_string(i % 5), "v" + std::to_string(i), 1000 + i)});
    if (i % 7 == 0) apply(*o, {set("/k" + std::to_string(i % 3), "", 1000 + i)});
    BOOST_REQUIRE(all_versions(*o.db) == all_history(*o));  // same updates, none pointing at a trimmed one
  }
  BOOST_TEST(all_history(*o).size() <= 32u + 2u);  // the bound and its slack
  BOOST_TEST(o->history_from() > 0u);
  for (int k = 0; k < 5; ++k) {
    for (const auto& v : history(*o, "/k" + std::to_string(k), 1000)) BOOST_TEST(v.entry.sequence > o->history_from());
  }
  // And by age: every entry is older than the cutoff.
  while (o->history_from() != o->last_sequence()) {
    std::uint64_t before = o->history_from();
    BOOST_REQUIRE(o->trim_history_older_than(1'000'000).ok());
    if (o->history_from() == before) break;
  }
  BOOST_TEST((all_versions(*o.db) == all_history(*o)));
  BOOST_TEST(all_versions(*o.db).empty());
  BOOST_TEST(history(*o, "/k1").empty());
}

BOOST_AUTO_TEST_CASE(clear_drops_every_version) {
  TempDir dir;
  auto o = open_store(dir.str(), {}, kOn);
  apply(*o, {set("/k", "a", 1), set("/j", "b", 2)});
  BOOST_REQUIRE(o->clear().ok());
  BOOST_TEST(all_versions(*o.db).empty());
  BOOST_TEST(history(*o, "/k").empty());
}

// A database written by a zstore before chp_versions: no such column family
// and no chp_versions_from. It opens; its history has no versions (and is
// trimmed without any); new writes have theirs.
BOOST_AUTO_TEST_CASE(a_database_without_versions_opens_and_keeps_them_from_then_on) {
  TempDir dir;
  std::uint64_t old_last = 0;
  {
    Opened o;
    BOOST_REQUIRE(Database::Open(dir.str(), {}, &o.db).ok());
    BOOST_REQUIRE(ChpStore::Open(o.db.get(), &o.store, 16, kIndexBytes, kOn).ok());
    for (int i = 0; i < 10; ++i) apply(*o, {set("/k", "old" + std::to_string(i), i + 1)});
    old_last = o->last_sequence();
    close_store(o);
  }
  {  // what main's zstored left: drop the family and the meta key
    std::vector<std::string> names;
    BOOST_REQUIRE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir.str(), &names).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    for (const auto& n : names) descriptors.emplace_back(n, rocksdb::ColumnFamilyOptions());
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    BOOST_REQUIRE(rocksdb::DB::Open(rocksdb::DBOptions(), dir.str(), descriptors, &handles, &raw).ok());
    std::unique_ptr<rocksdb::DB> plain(raw);
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == "chp_versions") BOOST_REQUIRE(plain->DropColumnFamily(handles[i]).ok());
      if (names[i] == "meta") {
        BOOST_REQUIRE(
            plain->Delete(rocksdb::WriteOptions(), handles[i], std::string(zstore::storage::kMetaChpVersionsFrom))
                .ok());
      }
    }
    for (auto* h : handles) BOOST_REQUIRE(plain->DestroyColumnFamilyHandle(h).ok());
    BOOST_REQUIRE(plain->Close().ok());
  }
  Opened o;
  BOOST_REQUIRE(Database::Open(dir.str(), {}, &o.db).ok());
  BOOST_REQUIRE(ChpStore::Open(o.db.get(), &o.store, 16, kIndexBytes, kOn).ok());
  BOOST_TEST(o->versions_from() == old_last);
  BOOST_TEST(history(*o, "/k").empty());  // the old history has no versions
  std::vector<std::uint64_t> seqs;
  for (int i = 0; i < 40; ++i) seqs.push_back(apply(*o, {set("/k", "new" + std::to_string(i), 100 + i)})[0]);
  auto got = history(*o, "/k", 1000);
  BOOST_REQUIRE(!got.empty());
  BOOST_TEST(got.front().entry.sequence == seqs.back());
  BOOST_TEST(got.front().entry.value == "new39");
  for (const auto& v : got) BOOST_TEST(v.entry.sequence > old_last);
  // The trims went through the old entries (no versions) and the new ones.
  auto history_now = all_history(*o);
  BOOST_TEST((all_versions(*o.db) == history_now));
  BOOST_TEST(got.size() == history_now.size());
}

namespace {

// Entries in chp_versions' memtable (puts, deletes and range deletes): what
// the store wrote there since the database was opened (nothing is flushed
// in these small tests).
std::uint64_t written_to_versions(Database& db) {
  std::uint64_t entries = 0;
  BOOST_REQUIRE(
      db.db()->GetIntProperty(db.handle(Column::kChpVersions), "rocksdb.num-entries-active-mem-table", &entries));
  return entries;
}

}  // namespace

// Off (the default, no --chp-key-history): apply and the trims write
// nothing to chp_versions, and key_history answers that there is none.
BOOST_AUTO_TEST_CASE(off_writes_no_versions_and_key_history_is_unsupported) {
  TempDir dir;
  Opened o;
  BOOST_REQUIRE(Database::Open(dir.str(), {}, &o.db).ok());
  BOOST_REQUIRE(ChpStore::Open(o.db.get(), &o.store, 16).ok());  // key_history off by default
  BOOST_TEST(!o->keeps_key_history());
  for (int i = 0; i < 100; ++i) apply(*o, {set("/k" + std::to_string(i % 3), "v" + std::to_string(i), 1000 + i)});
  apply(*o, {set("/k1", "", 2000)});
  BOOST_REQUIRE(o->trim_history_older_than(1'000'000).ok());
  BOOST_TEST(o->history_from() > 0u);  // the trims ran
  BOOST_TEST(all_versions(*o.db).empty());
  BOOST_TEST(written_to_versions(*o.db) == 0u);  // not even tombstones
  std::vector<ChpVersion> out{ChpVersion{}};
  Status s = o->key_history("/k0", 64, &out);
  BOOST_TEST(!s.ok());
  BOOST_TEST(out.empty());
  std::string from;
  BOOST_REQUIRE(o.db->get_meta(zstore::storage::kMetaChpVersionsFrom, &from).ok());
  BOOST_TEST(from.empty());
}

// on -> off -> on across reopens: the "off" open drops the versions and
// chp_versions_from, the writes made while off have none, and the last
// "on" open serves only what was written after it.
BOOST_AUTO_TEST_CASE(on_off_on_serves_only_versions_written_after_the_last_on) {
  TempDir dir;
  std::uint64_t off_last = 0;
  {
    auto o = open_store(dir.str(), {}, kOn);
    BOOST_REQUIRE(o->begin_epoch(0, 1764666704000, 0).ok());
    apply(*o, {set("/k", "on1", 1), set("/k", "on2", 2), set("/j", "on1", 3)});
    BOOST_REQUIRE(history(*o, "/k").size() == 2u);
    close_store(o);
  }
  {
    auto o = open_store(dir.str());  // off
    BOOST_TEST(!o->keeps_key_history());
    BOOST_TEST(written_to_versions(*o.db) > 0u);  // the drop
    BOOST_TEST(all_versions(*o.db).empty());
    std::string from;
    BOOST_REQUIRE(o.db->get_meta(zstore::storage::kMetaChpVersionsFrom, &from).ok());
    BOOST_TEST(from.empty());
    apply(*o, {set("/k", "off1", 4)});
    BOOST_TEST(all_versions(*o.db).empty());
    off_last = o->last_sequence();
    close_store(o);
  }
  {  // off again: nothing left to drop, nothing written
    auto o = open_store(dir.str());
    BOOST_TEST(written_to_versions(*o.db) == 0u);
    close_store(o);
  }
  auto o = open_store(dir.str(), {}, kOn);
  BOOST_TEST(o->keeps_key_history());
  BOOST_TEST(o->versions_from() == off_last);
  BOOST_TEST(history(*o, "/k").empty());  // neither on1, on2 (dropped) nor off1 (none kept)
  BOOST_TEST(history(*o, "/j").empty());
  auto seqs = apply(*o, {set("/k", "on3", 5)});
  std::vector<std::pair<std::uint64_t, std::string>> want = {{seqs[0], "on3"}};
  BOOST_TEST((seen(history(*o, "/k")) == want));
  close_store(o);
  auto again = open_store(dir.str(), {}, kOn);  // on -> on keeps them
  BOOST_TEST((seen(history(*again, "/k")) == want));
  BOOST_TEST(again->versions_from() == off_last);
}
