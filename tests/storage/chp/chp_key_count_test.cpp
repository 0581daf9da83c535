// ChpStore::live_keys(): the key count /metrics reports without a scan. It
// must equal the keys a full scan finds after every kind of change, after
// a clean restart, after kill -9, and on a database written before it.
#include <signal.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "storage/chp/chp_store.h"
#include "storage/db/database.h"
#include "tests/storage/chp/chp_store_fixture.h"
#include "tests/support/test_support.h"

namespace fs = std::filesystem;
using zstore::testing::TempDir;
using namespace std::string_literals;

namespace {

const char* const kCrashChild = "crash_child_counts_then_is_killed";
constexpr int kChildKeys = 3000;

// The count a scan of the whole map finds.
std::uint64_t scanned(ChpStore& store) { return keys_under(store, "").size(); }

void check_exact(ChpStore& store, std::uint64_t expected) {
  BOOST_CHECK_EQUAL(store.live_keys(), expected);
  BOOST_CHECK_EQUAL(scanned(store), expected);
}

std::vector<ChpRecord> records(int from, int to) {
  std::vector<ChpRecord> out;
  for (int i = from; i < to; ++i) out.push_back({key_n(i), {static_cast<std::uint64_t>(i + 1), 0, "", "", "v"}, 0});
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(count_follows_sets_overwrites_and_deletes) {
  TempDir dir;
  auto s = open_store(dir.str());
  check_exact(*s, 0);
  apply(*s, {put("a", "1"), put("b", "2"), put("c", "3")});
  check_exact(*s, 3);
  apply(*s, {put("a", "again"), put("b", "again", 99)});  // overwrites: no new keys
  check_exact(*s, 3);
  apply(*s, {del("a"), del("missing"), del("a")});  // deleting nothing changes nothing
  check_exact(*s, 2);
  apply(*s, {put("d", "1"), del("d"), put("d", "2"), put("e", "1"), del("e")});  // in one batch, in order
  check_exact(*s, 3);
}

BOOST_AUTO_TEST_CASE(expired_keys_leave_the_count) {
  TempDir dir;
  auto s = open_store(dir.str());
  apply(*s, {put("short", "1", 1000), put("long", "2", 5000), put("forever", "3")});
  auto dues = due(*s, 2000);
  BOOST_REQUIRE_EQUAL(dues.size(), 1u);
  apply(*s, {del(dues[0].first)});  // as the server's sweep deletes it
  check_exact(*s, 2);
}

BOOST_AUTO_TEST_CASE(clear_and_load_set_the_count) {
  TempDir dir;
  auto s = open_store(dir.str());
  apply(*s, {put(key_n(0), "x"), put(key_n(1), "x"), put("z", "x", 500)});
  BOOST_REQUIRE(s->clear().ok());
  check_exact(*s, 0);
  BOOST_REQUIRE(s->load(records(0, 100)).ok());
  BOOST_REQUIRE(s->load(records(50, 150)).ok());  // 50 already there
  check_exact(*s, 150);
}

// Loads in ascending order right after clear() skip the lookups; a write
// in between, or keys out of order, bring them back.
BOOST_AUTO_TEST_CASE(loads_after_a_write_or_out_of_order_look_keys_up) {
  TempDir dir;
  auto s = open_store(dir.str());
  apply(*s, {put(key_n(5), "old", 900)});
  BOOST_REQUIRE(s->clear().ok());
  BOOST_REQUIRE(s->load(records(0, 10)).ok());
  check_exact(*s, 10);
  apply(*s, {put(key_n(20), "x")});
  BOOST_REQUIRE(s->load(records(15, 25)).ok());  // key 20 is there already
  check_exact(*s, 20);
  BOOST_REQUIRE(s->clear().ok());
  std::vector<ChpRecord> unordered = records(30, 31);
  auto more = records(10, 31);  // 30 again, below and then equal
  unordered.insert(unordered.end(), more.begin(), more.end());
  BOOST_REQUIRE(s->load(unordered).ok());
  check_exact(*s, 21);
  BOOST_CHECK(expiry_index(*s.db).empty());
}

// clear() is a range delete in the memtable that holds the map's puts (in
// sorted runs, sorted_runs_rep.h): later puts, reads and another clear see
// exactly what they should.
BOOST_AUTO_TEST_CASE(writes_between_range_clears_stay_exact) {
  TempDir dir;
  auto s = open_store(dir.str());
  for (int round = 0; round < 3; ++round) {
    std::vector<ChpWrite> writes;
    for (int i = 0; i < 2000; ++i) writes.push_back(put(key_n(i * 7 % 2000), "r" + std::to_string(round)));
    apply(*s, writes);
    check_exact(*s, 2000);
    BOOST_CHECK_EQUAL(get(*s, key_n(1999))->value, "r" + std::to_string(round));
    BOOST_REQUIRE(s->clear().ok());
    check_exact(*s, 0);
    BOOST_CHECK(!get(*s, key_n(0)));
  }
  apply(*s, {put("", "empty key"), put("\xff\xff", "last")});
  check_exact(*s, 2);
  BOOST_REQUIRE(s->clear().ok());
  check_exact(*s, 0);
}

BOOST_AUTO_TEST_CASE(a_refused_write_leaves_the_count) {
  TempDir dir;
  {
    auto s = open_store(dir.str());
    apply(*s, {put("a", "1")});
    close_store(s);
  }
  DatabaseOptions ro;
  ro.read_only = true;
  auto s = open_store(dir.str(), ro);
  std::vector<ChpWrite> writes = {put("b", "2")};
  BOOST_CHECK(!s->apply(writes).ok());
  BOOST_CHECK_EQUAL(s->live_keys(), 1u);
}

BOOST_AUTO_TEST_CASE(count_survives_a_clean_restart) {
  TempDir dir;
  {
    auto s = open_store(dir.str());
    apply(*s, {put("a", "1"), put("b", "2"), put("c", "3"), del("b")});
    close_store(s);
  }
  auto s = open_store(dir.str());
  check_exact(*s, 2);
  apply(*s, {put("b", "4")});
  check_exact(*s, 3);
}

// A database written before the count was kept: counted once at open.
BOOST_AUTO_TEST_CASE(database_without_a_stored_count_is_counted_at_open) {
  TempDir dir;
  {
    auto s = open_store(dir.str());
    apply(*s, {put("a", "1"), put("b", "2"), put("c", "3")});
    BOOST_REQUIRE(s.db->db()->Delete({}, s.db->handle(Column::kMeta), std::string(zstore::storage::kMetaChpKeys)).ok());
    close_store(s);
  }
  {
    auto s = open_store(dir.str());
    check_exact(*s, 3);
    apply(*s, {del("a")});
    close_store(s);
  }
  auto s = open_store(dir.str());
  check_exact(*s, 2);
}

// Run only by count_is_exact_after_kill_9, in a child process: writes with
// SyncPolicy::kNone and dies by SIGKILL with the database open.
BOOST_AUTO_TEST_CASE(crash_child_counts_then_is_killed, *boost::unit_test::disabled()) {
  auto& suite = boost::unit_test::framework::master_test_suite();
  BOOST_REQUIRE_EQUAL(suite.argc, 2);
  DatabaseOptions options;
  options.sync = SyncPolicy::kNone;
  auto s = open_store(suite.argv[1], options);
  for (int b = 0; b < kChildKeys / 100; ++b) {
    std::vector<ChpWrite> batch;
    for (int i = 0; i < 100; ++i) batch.push_back(put(key_n(b * 100 + i), "v", i % 3 == 0 ? 10'000'000 : 0));
    batch.push_back(del(key_n(b * 100)));  // one in each batch deleted again
    apply(*s, batch);
  }
  ::kill(::getpid(), SIGKILL);
}

BOOST_AUTO_TEST_CASE(count_is_exact_after_kill_9) {
  TempDir dir;
  std::string data = (dir.path() / "data").string();
  std::string self = fs::read_symlink("/proc/self/exe").string();
  zstore::testing::Process child(self, {"--run_test="s + kCrashChild, "--log_level=error", "--", data},
                                 dir.path() / "child.log");
  int rc = child.wait(std::chrono::seconds(60));
  BOOST_REQUIRE_MESSAGE(rc == 128 + SIGKILL, "child ended with " << rc << ", log:\n" << child.log());
  auto s = open_store(data);
  check_exact(*s, kChildKeys - kChildKeys / 100);
}
