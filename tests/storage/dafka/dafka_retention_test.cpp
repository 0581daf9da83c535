// Dafka retention (DafkaRetention over a DafkaLog, with a fake clock):
// limits by records, bytes and age move a persisted floor and delete what
// is below it, heads stay, records beyond a gap wait, topic prefixes pick
// their own limits, idle partitions leave memory and disk, and the counters
// are maintained (also from first-format head entries).
#include "storage/dafka/dafka_retention.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <boost/test/unit_test.hpp>
#include <memory>
#include <string>
#include <vector>

#include "protocol/byte_order.h"
#include "tests/support/test_support.h"

using namespace zstore::storage;
using zstore::testing::TempDir;

namespace {

const std::string kP = "0123456789ABCDEF0123456789ABCDEF";
const std::string kQ = "FEDCBA9876543210FEDCBA9876543210";
constexpr std::int64_t kT0 = 1'700'000'000'000;

struct Fixture {
  TempDir dir;
  std::int64_t now = kT0;
  DafkaRetentionRules rules;
  std::unique_ptr<Database> db;
  std::unique_ptr<DafkaLog> log;

  explicit Fixture(DafkaRetentionPolicy defaults = {}) {
    rules.defaults = defaults;
    open();
  }
  void open() {
    log.reset();
    db.reset();
    BOOST_REQUIRE(Database::Open(dir.str(), DatabaseOptions{}, &db).ok());
    DafkaLogOptions o;
    o.retention = rules;
    o.now_ms = [this] { return now; };
    BOOST_REQUIRE(DafkaLog::Open(db.get(), &log, o).ok());
  }
  void append(std::uint64_t from, std::uint64_t to, const std::string& subject = "hello",
              const std::string& partition = kP) {
    std::vector<DafkaRecord> records;
    for (auto o = from; o < to; ++o) records.push_back({subject, partition, o, std::string(100, 'x')});
    std::vector<DafkaAppend> out;
    BOOST_REQUIRE(log->append(records, &out).ok());
  }
  DafkaRetentionPass retain() {
    DafkaRetention retention(db.get(), log.get(), rules);
    DafkaRetentionPass pass;
    BOOST_REQUIRE(retention.run(now, &pass).ok());
    return pass;
  }
  std::vector<std::uint64_t> offsets(const std::string& subject = "hello", const std::string& partition = kP) {
    std::vector<std::uint64_t> out;
    auto cursor = log->read(subject, partition, 0, ~std::uint64_t{0});
    DafkaRecord r;
    while (cursor->next(&r)) out.push_back(r.offset);
    BOOST_REQUIRE(cursor->status().ok());
    return out;
  }
  DafkaPartitionStats stats(const std::string& subject = "hello") {
    for (const auto& p : log->partitions_after(nullptr, 1000))
      if (p.subject == subject) return p;
    BOOST_FAIL("no partition of " << subject);
    return {};
  }
  std::size_t keys(Column column) {
    std::unique_ptr<rocksdb::Iterator> it(db->db()->NewIterator(rocksdb::ReadOptions(), db->handle(column)));
    std::size_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
    return n;
  }
};

std::vector<std::uint64_t> range(std::uint64_t from, std::uint64_t to) {
  std::vector<std::uint64_t> v;
  for (auto o = from; o < to; ++o) v.push_back(o);
  return v;
}

}  // namespace

BOOST_AUTO_TEST_CASE(records_limit_deletes_the_oldest_and_moves_the_floor_not_the_head) {
  Fixture f({0, 0, 10});
  f.append(0, 100);
  auto pass = f.retain();
  BOOST_TEST(pass.records_deleted == 90u);
  BOOST_TEST(f.offsets() == range(90, 100));
  BOOST_TEST(f.log->floor("hello", kP) == 90u);
  BOOST_TEST(*f.log->head("hello", kP) == 99u);
  BOOST_TEST(f.stats().records == 10u);
  BOOST_TEST(f.stats().bytes == 1000u);
  BOOST_TEST(f.log->records_retained_away() == 90u);
  BOOST_TEST(f.retain().records_deleted == 0u);  // within the limit now
}

BOOST_AUTO_TEST_CASE(bytes_limit_keeps_the_newest_records_that_fit) {
  Fixture f({0, 1050, 0});
  f.append(0, 50);
  f.retain();
  BOOST_TEST(f.offsets() == range(40, 50));
  BOOST_TEST(f.stats().bytes == 1000u);
}

BOOST_AUTO_TEST_CASE(age_limit_deletes_records_older_than_their_time_mark) {
  Fixture f({5000, 0, 0});  // time marks every second
  f.append(0, 10);
  f.now += 2000;
  f.append(10, 20);
  f.now += 2000;
  f.append(20, 30);
  f.now = kT0 + 6999;  // records 0..9 are not yet known to be 5 s old
  BOOST_TEST(f.retain().records_deleted == 0u);
  f.now = kT0 + 7000;  // appended before kT0 + 2000: older than 5 s
  BOOST_TEST(f.retain().records_deleted == 10u);
  BOOST_TEST(f.offsets() == range(10, 30));
  BOOST_TEST(f.keys(Column::kDafkaTimes) == 1u);  // the mark at 10 dates nothing left: deleted with the records
}

BOOST_AUTO_TEST_CASE(the_floor_and_counters_survive_a_reopen) {
  Fixture f({0, 0, 5});
  f.append(0, 20);
  f.retain();
  f.open();
  BOOST_TEST(f.log->floor("hello", kP) == 15u);
  BOOST_TEST(*f.log->head("hello", kP) == 19u);
  BOOST_TEST(f.stats().records == 5u);
  BOOST_TEST(f.stats().bytes == 500u);
  BOOST_TEST(f.offsets() == range(15, 20));
}

BOOST_AUTO_TEST_CASE(the_floor_never_passes_the_head_records_beyond_a_gap_wait) {
  Fixture f({0, 0, 3});
  f.append(0, 5);
  f.append(10, 15);
  f.retain();
  BOOST_TEST(f.log->floor("hello", kP) == 5u);
  BOOST_TEST(f.offsets() == range(10, 15));
  BOOST_TEST(*f.log->head("hello", kP) == 4u);
}

BOOST_AUTO_TEST_CASE(the_longest_topic_prefix_picks_the_limits) {
  Fixture f;
  f.rules.overrides = {{"logs/", {0, 0, 5}}, {"logs/keep", {}}};
  f.open();
  f.append(0, 20, "hello");
  f.append(0, 20, "logs/a");
  f.append(0, 20, "logs/keep");
  f.retain();
  BOOST_TEST(f.offsets("hello").size() == 20u);
  BOOST_TEST(f.offsets("logs/a") == range(15, 20));
  BOOST_TEST(f.offsets("logs/keep").size() == 20u);
}

BOOST_AUTO_TEST_CASE(an_idle_partition_ages_out_of_memory_and_disk) {
  Fixture f({5000, 0, 0});
  f.append(0, 10, "hello", kP);
  f.append(0, 10, "hello", kQ);
  f.now += 3000;
  f.append(10, 20, "hello", kQ);  // Q still written to
  f.now = kT0 + 5000;
  auto pass = f.retain();
  BOOST_TEST(pass.partitions_dropped == 1u);
  BOOST_TEST(!f.log->known("hello", kP));
  BOOST_TEST(f.log->known("hello", kQ));
  BOOST_TEST(f.log->partition_count() == 1u);
  BOOST_TEST(f.log->partitions_dropped() == 1u);
  f.open();
  BOOST_TEST(!f.log->known("hello", kP));
  BOOST_TEST(f.offsets("hello", kP).empty());
  BOOST_TEST(f.keys(Column::kDafkaHeads) == 1u);
}

BOOST_AUTO_TEST_CASE(topic_totals_follow_appends_and_retention) {
  Fixture f({0, 0, 4});
  f.append(0, 10, "a", kP);
  f.append(0, 6, "a", kQ);
  f.append(0, 3, "b", kP);
  auto totals = f.log->topic_totals();
  BOOST_REQUIRE(totals.size() == 2u);
  BOOST_TEST(totals[0].topic == "a");
  BOOST_TEST(totals[0].partitions == 2u);
  BOOST_TEST(totals[0].records == 16u);
  BOOST_TEST(totals[0].bytes == 1600u);
  BOOST_TEST(totals[1].records == 3u);
  f.retain();
  totals = f.log->topic_totals();
  BOOST_TEST(totals[0].records == 8u);
  BOOST_TEST(totals[0].bytes == 800u);
  BOOST_TEST(totals[1].records == 3u);
}

BOOST_AUTO_TEST_CASE(a_trim_planned_on_a_stale_floor_is_not_applied) {
  Fixture f;
  f.append(0, 10);
  auto seen = f.stats();
  bool applied = false;
  BOOST_REQUIRE(f.log->trim(seen, 4, 4, 400, &applied).ok());
  BOOST_TEST(applied);
  BOOST_REQUIRE(f.log->trim(seen, 6, 6, 600, &applied).ok());  // seen.floor is 0, the floor is 4 now
  BOOST_TEST(!applied);
  BOOST_TEST(f.offsets() == range(4, 10));
}

BOOST_AUTO_TEST_CASE(a_first_format_head_entry_gets_its_counters_at_open) {
  Fixture f;
  f.append(0, 7);
  rocksdb::WriteBatch batch;  // rewrite the head as the first format did: next alone
  std::string next;
  zstore::protocol::put_be<std::uint64_t>(next, 7);
  batch.Put(f.db->handle(Column::kDafkaHeads), dafka_partition_prefix("hello", kP), next);
  BOOST_REQUIRE(f.db->write(batch).ok());
  f.open();
  BOOST_TEST(f.stats().records == 7u);
  BOOST_TEST(f.stats().bytes == 700u);
  BOOST_TEST(f.log->floor("hello", kP) == 0u);
  BOOST_TEST(*f.log->head("hello", kP) == 6u);
}

BOOST_AUTO_TEST_CASE(retention_goes_on_while_writes_are_refused_for_lack_of_space) {
  Fixture f({0, 0, 5});
  f.append(0, 20);
  f.db->refuse_writes("disk almost full");
  std::vector<DafkaRecord> more = {{"hello", kP, 20, "late"}};
  std::vector<DafkaAppend> out;
  BOOST_TEST(!f.log->append(more, &out).ok());
  BOOST_TEST(f.retain().records_deleted == 15u);  // it is what frees the space
  BOOST_TEST(f.offsets() == range(15, 20));
}
