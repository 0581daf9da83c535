// Tests of KeptIterator (storage/db/kept_iterator.h): an iterator reused while
// younger than its age bound, with a view frozen when it was made. Times
// are given, not read from a clock.
#include "storage/db/kept_iterator.h"

#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "tests/support/test_support.h"

using zstore::storage::KeptIterator;
using zstore::testing::TempDir;
using namespace std::chrono_literals;

namespace {

std::unique_ptr<rocksdb::DB> open_db(const std::string& dir) {
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, dir, &db);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  return std::unique_ptr<rocksdb::DB>(db);
}

bool sees(rocksdb::Iterator* it, const std::string& key) {
  it->Seek(key);
  return it->Valid() && it->key().ToString() == key;
}

std::uint64_t live_versions(rocksdb::DB* db) {
  std::uint64_t n = 0;
  BOOST_REQUIRE(db->GetIntProperty("rocksdb.num-live-versions", &n));
  return n;
}

}  // namespace

BOOST_AUTO_TEST_CASE(get_reuses_the_iterator_until_it_is_max_age_old) {
  TempDir dir;
  auto db = open_db(dir.str());
  KeptIterator kept(db.get(), db->DefaultColumnFamily(), 100ms);
  const KeptIterator::Clock::time_point t0{};
  bool fresh = false;
  rocksdb::Iterator* first = kept.get(t0, &fresh);
  BOOST_CHECK(fresh);
  BOOST_REQUIRE(first != nullptr);
  BOOST_CHECK(kept.get(t0 + 99ms, &fresh) == first);
  BOOST_CHECK(!fresh);
  kept.get(t0 + 100ms, &fresh);
  BOOST_CHECK(fresh);
  BOOST_CHECK(kept.holds());
}

BOOST_AUTO_TEST_CASE(a_kept_iterator_sees_the_data_as_it_was_until_renewed) {
  TempDir dir;
  auto db = open_db(dir.str());
  BOOST_REQUIRE(db->Put(rocksdb::WriteOptions(), "a", "1").ok());
  KeptIterator kept(db.get(), db->DefaultColumnFamily(), 1s);
  const KeptIterator::Clock::time_point t0{};
  bool fresh = false;
  BOOST_CHECK(sees(kept.get(t0, &fresh), "a"));
  BOOST_REQUIRE(db->Put(rocksdb::WriteOptions(), "b", "2").ok());
  BOOST_CHECK(!sees(kept.get(t0 + 1ms, &fresh), "b"));
  BOOST_CHECK(!fresh);
  BOOST_CHECK(sees(kept.renew(t0 + 2ms), "b"));
  // renew() restarts the age: still kept 999 ms later.
  kept.get(t0 + 1001ms, &fresh);
  BOOST_CHECK(!fresh);
}

// What the age bound is for: a kept iterator pins the version it saw, so a
// flush leaves two live versions until the iterator is released.
BOOST_AUTO_TEST_CASE(release_if_stale_drops_it_at_max_age_and_unpins_the_old_version) {
  TempDir dir;
  auto db = open_db(dir.str());
  BOOST_REQUIRE(db->Put(rocksdb::WriteOptions(), "a", "1").ok());
  KeptIterator kept(db.get(), db->DefaultColumnFamily(), 100ms);
  const KeptIterator::Clock::time_point t0{};
  bool fresh = false;
  kept.get(t0, &fresh);
  BOOST_REQUIRE(db->Flush(rocksdb::FlushOptions()).ok());
  BOOST_CHECK_EQUAL(live_versions(db.get()), 2u);
  kept.release_if_stale(t0 + 99ms);
  BOOST_CHECK(kept.holds());
  BOOST_CHECK_EQUAL(live_versions(db.get()), 2u);
  kept.release_if_stale(t0 + 100ms);
  BOOST_CHECK(!kept.holds());
  BOOST_CHECK_EQUAL(live_versions(db.get()), 1u);
}

BOOST_AUTO_TEST_CASE(reset_drops_it_and_the_next_get_makes_a_new_one) {
  TempDir dir;
  auto db = open_db(dir.str());
  KeptIterator kept(db.get(), db->DefaultColumnFamily(), 1s);
  const KeptIterator::Clock::time_point t0{};
  bool fresh = false;
  kept.get(t0, &fresh);
  kept.reset();
  BOOST_CHECK(!kept.holds());
  kept.get(t0 + 1ms, &fresh);
  BOOST_CHECK(fresh);
}
