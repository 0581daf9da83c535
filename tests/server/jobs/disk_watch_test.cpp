// DiskWatch against a real Database with an injected free-space probe:
// below the watermark every write is refused with a clear reason while
// reads go on; above it writes are accepted again.
#include "server/jobs/disk_watch.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <memory>
#include <string>

#include "storage/db/database.h"
#include "tests/support/test_support.h"

using zstore::server::DiskWatch;
using zstore::storage::Column;
using zstore::storage::Database;
using zstore::storage::DatabaseOptions;
using zstore::storage::Status;
using zstore::testing::TempDir;
using namespace std::chrono_literals;

namespace {

struct Fixture {
  TempDir dir;
  std::unique_ptr<Database> db;
  std::atomic<std::uint64_t> free{10000};
  Fixture() { BOOST_REQUIRE(Database::Open(dir.str(), DatabaseOptions{}, &db).ok()); }
  DiskWatch::Probe probe() {
    return [this](const std::string& d) {
      BOOST_CHECK_EQUAL(d, dir.str());
      return std::optional<std::uint64_t>(free.load());
    };
  }
  Status put(const std::string& key) {
    rocksdb::WriteBatch batch;
    batch.Put(db->handle(Column::kChpMap), key, "v");
    return db->write(batch);
  }
  bool readable(const std::string& key) {
    std::string value;
    return db->db()->Get(rocksdb::ReadOptions(), db->handle(Column::kChpMap), key, &value).ok();
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(writes_are_refused_below_the_watermark_and_accepted_above_it_again) {
  Fixture f;
  DiskWatch watch(*f.db, 5000, 1h, f.probe());
  watch.check();
  BOOST_CHECK(!watch.low());
  BOOST_CHECK(f.put("before").ok());

  f.free = 4999;
  watch.check();
  BOOST_CHECK(watch.low());
  BOOST_CHECK_EQUAL(watch.free_bytes(), 4999u);
  BOOST_CHECK_EQUAL(watch.low_episodes(), 1u);
  Status s = f.put("during");
  BOOST_REQUIRE(!s.ok());
  BOOST_CHECK_MESSAGE(s.message().find("below --min-free-bytes 5000") != std::string::npos, s.message());
  BOOST_CHECK(f.readable("before"));  // reads go on
  BOOST_CHECK(!f.readable("during"));
  BOOST_CHECK(!f.db->write_failing());  // a refusal, not a storage error to recover from

  f.free = 5000;
  watch.check();
  BOOST_CHECK(!watch.low());
  BOOST_CHECK(f.put("after").ok());
  BOOST_CHECK_EQUAL(watch.low_episodes(), 1u);
}

BOOST_AUTO_TEST_CASE(the_watch_thread_checks_on_its_timer) {
  Fixture f;
  DiskWatch watch(*f.db, 5000, 10ms, f.probe());
  watch.start();
  BOOST_CHECK(!watch.low());
  f.free = 100;
  BOOST_CHECK(zstore::testing::wait_until([&] { return watch.low(); }));
  BOOST_CHECK(!f.put("k").ok());
  f.free = 1u << 20;
  BOOST_CHECK(zstore::testing::wait_until([&] { return !watch.low(); }));
  BOOST_CHECK(f.put("k").ok());
  watch.stop();
}

BOOST_AUTO_TEST_CASE(a_zero_watermark_disables_the_watch) {
  Fixture f;
  f.free = 0;
  DiskWatch watch(*f.db, 0, 10ms, f.probe());
  watch.start();
  watch.check();
  BOOST_CHECK(!watch.enabled());
  BOOST_CHECK(!watch.low());
  BOOST_CHECK(f.put("k").ok());
}

BOOST_AUTO_TEST_CASE(statvfs_measures_the_data_dir) {
  TempDir dir;
  auto free = DiskWatch::statvfs_free(dir.str());
  BOOST_REQUIRE(free.has_value());
  BOOST_CHECK_GT(*free, 0u);
  BOOST_CHECK(!DiskWatch::statvfs_free(dir.str() + "/missing/dir").has_value());
}
