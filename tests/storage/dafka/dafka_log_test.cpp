// DafkaLog: contiguous heads, records kept after a gap, duplicates, range
// reads, heads by subject, and nothing appended lost to a crash.
#include "storage/dafka/dafka_log.h"

#include <boost/test/unit_test.hpp>
#include <rocksdb/db.h>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "storage/dafka/node_address.h"
#include "tests/support/test_support.h"

using zstore::storage::DafkaAppend;
using zstore::storage::DafkaLog;
using zstore::storage::DafkaRecord;
using zstore::storage::Database;
using zstore::storage::DatabaseOptions;
using zstore::testing::TempDir;

namespace {

const std::string kP = "0123456789ABCDEF0123456789ABCDEF";
const std::string kQ = "FEDCBA9876543210FEDCBA9876543210";

struct Fixture {
  TempDir dir;
  std::unique_ptr<Database> db;
  std::unique_ptr<DafkaLog> log;
  Fixture() { open(); }
  void open(std::uint64_t max_ahead = DafkaLog::kDefaultMaxAhead) {
    log.reset();
    db.reset();
    BOOST_REQUIRE(Database::Open(dir.str(), DatabaseOptions{}, &db).ok());
    BOOST_REQUIRE(DafkaLog::Open(db.get(), &log, max_ahead).ok());
  }
  std::vector<DafkaAppend> append(std::vector<DafkaRecord> records) {
    std::vector<DafkaAppend> out;
    BOOST_REQUIRE(log->append(records, &out).ok());
    return out;
  }
  std::vector<std::uint64_t> offsets(const std::string& subject, const std::string& partition, std::uint64_t from,
                                     std::uint64_t count) {
    std::vector<std::uint64_t> out;
    auto cursor = log->read(subject, partition, from, count);
    DafkaRecord r;
    while (cursor->next(&r)) out.push_back(r.offset);
    BOOST_REQUIRE(cursor->status().ok());
    return out;
  }
};

DafkaRecord rec(std::uint64_t offset, const std::string& subject = "hello", const std::string& partition = kP) {
  return {subject, partition, offset, "content " + std::to_string(offset)};
}

}  // namespace

BOOST_AUTO_TEST_CASE(contiguous_appends_advance_the_head) {
  Fixture f;
  BOOST_CHECK(!f.log->head("hello", kP));
  auto out = f.append({rec(0), rec(1), rec(2)});
  BOOST_CHECK(out == std::vector<DafkaAppend>(3, DafkaAppend::kStored));
  BOOST_REQUIRE(f.log->head("hello", kP));
  BOOST_CHECK_EQUAL(*f.log->head("hello", kP), 2u);
  BOOST_CHECK(!f.log->first_after_gap("hello", kP));
}

BOOST_AUTO_TEST_CASE(records_after_a_gap_are_kept_and_filling_the_gap_advances_over_them) {
  Fixture f;
  f.append({rec(0), rec(1), rec(3), rec(4)});
  BOOST_CHECK_EQUAL(*f.log->head("hello", kP), 1u);
  BOOST_CHECK_EQUAL(*f.log->first_after_gap("hello", kP), 3u);
  f.append({rec(2)});
  BOOST_CHECK_EQUAL(*f.log->head("hello", kP), 4u);
  BOOST_CHECK(!f.log->first_after_gap("hello", kP));
}

BOOST_AUTO_TEST_CASE(unknown_partition_without_offset_zero_has_no_head) {
  Fixture f;
  f.append({rec(5)});
  BOOST_CHECK(f.log->known("hello", kP));
  BOOST_CHECK(!f.log->head("hello", kP));
  BOOST_CHECK(f.log->heads("hello").empty());
  f.append({rec(0), rec(1), rec(2), rec(3), rec(4)});
  BOOST_CHECK_EQUAL(*f.log->head("hello", kP), 5u);
}

BOOST_AUTO_TEST_CASE(duplicates_are_ignored_even_within_a_batch) {
  Fixture f;
  f.append({rec(0), rec(1)});
  auto out = f.append({rec(1), rec(2), rec(2), rec(4), rec(4)});
  BOOST_CHECK(out[0] == DafkaAppend::kDuplicate);
  BOOST_CHECK(out[1] == DafkaAppend::kStored);
  BOOST_CHECK(out[2] == DafkaAppend::kDuplicate);
  BOOST_CHECK(out[3] == DafkaAppend::kStored);
  BOOST_CHECK(out[4] == DafkaAppend::kDuplicate);
  out = f.append({rec(4)});
  BOOST_CHECK(out[0] == DafkaAppend::kDuplicate);
  BOOST_CHECK_EQUAL(*f.log->head("hello", kP), 2u);
}

BOOST_AUTO_TEST_CASE(records_too_far_beyond_the_head_are_refused) {
  Fixture f;
  f.open(10);
  f.append({rec(0)});
  auto out = f.append({rec(11), rec(12)});
  BOOST_CHECK(out[0] == DafkaAppend::kStored);
  BOOST_CHECK(out[1] == DafkaAppend::kTooFar);
}

BOOST_AUTO_TEST_CASE(read_returns_the_range_in_order_with_content) {
  Fixture f;
  f.append({rec(0), rec(1), rec(2), rec(3), rec(5), rec(0, "hello2"), rec(0, "hello", kQ)});
  BOOST_CHECK((f.offsets("hello", kP, 1, 2) == std::vector<std::uint64_t>{1, 2}));
  BOOST_CHECK((f.offsets("hello", kP, 2, 100) == std::vector<std::uint64_t>{2, 3, 5}));
  BOOST_CHECK((f.offsets("hello", kP, 0, 0).empty()));
  BOOST_CHECK((f.offsets("hello", kP, 6, ~std::uint64_t{0}).empty()));
  auto cursor = f.log->read("hello", kP, 3, 1);
  DafkaRecord r;
  BOOST_REQUIRE(cursor->next(&r));
  BOOST_CHECK(r == rec(3));
  BOOST_CHECK(!cursor->next(&r));
}

BOOST_AUTO_TEST_CASE(heads_match_the_subject_exactly) {
  Fixture f;
  f.append({rec(0), rec(1), rec(0, "hello", kQ), rec(0, "hello2"), rec(0, "hell")});
  auto heads = f.log->heads("hello");
  BOOST_REQUIRE_EQUAL(heads.size(), 2u);
  BOOST_CHECK_EQUAL(heads[0].partition, kP);
  BOOST_CHECK_EQUAL(heads[0].head, 1u);
  BOOST_CHECK_EQUAL(heads[1].partition, kQ);
  BOOST_CHECK_EQUAL(heads[1].head, 0u);
  BOOST_CHECK(f.log->heads("nothing").empty());
}

BOOST_AUTO_TEST_CASE(reopen_after_a_crash_keeps_heads_and_records_beyond_the_gap) {
  Fixture f;
  f.log.reset();
  f.db.reset();
  // Another process appends and dies without closing anything.
  TempDir logs;
  zstore::testing::Process writer(ZSTORE_CRASH_WRITER, {f.dir.str(), "hello", kP, "0", "1", "3", "4"},
                                  logs.path() / "writer.log");
  BOOST_REQUIRE_MESSAGE(writer.wait(std::chrono::seconds(30)) == 0, writer.log());
  f.open();
  BOOST_CHECK_EQUAL(*f.log->head("hello", kP), 1u);
  BOOST_CHECK_EQUAL(*f.log->first_after_gap("hello", kP), 3u);
  f.append({rec(2)});
  BOOST_CHECK_EQUAL(*f.log->head("hello", kP), 4u);
  BOOST_CHECK((f.offsets("hello", kP, 0, 10) == std::vector<std::uint64_t>{0, 1, 2, 3, 4}));
}

BOOST_AUTO_TEST_CASE(node_address_is_stored_once_and_kept) {
  Fixture f;
  std::string a, b;
  BOOST_REQUIRE(zstore::storage::load_or_store_node_address(f.db.get(), kP, &a).ok());
  BOOST_CHECK_EQUAL(a, kP);
  f.open();
  BOOST_REQUIRE(zstore::storage::load_or_store_node_address(f.db.get(), kQ, &b).ok());
  BOOST_CHECK_EQUAL(b, kP);
}

BOOST_AUTO_TEST_CASE(skip_gap_moves_the_head_over_the_missing_offsets_and_persists_it) {
  Fixture f;
  f.append({rec(0), rec(1), rec(5), rec(6), rec(9)});
  std::uint64_t skipped = 99;
  BOOST_REQUIRE(f.log->skip_gap("hello", kP, &skipped).ok());
  BOOST_CHECK_EQUAL(skipped, 3u);  // 2, 3, 4
  BOOST_CHECK_EQUAL(*f.log->head("hello", kP), 6u);
  BOOST_CHECK_EQUAL(*f.log->first_after_gap("hello", kP), 9u);
  BOOST_CHECK((f.offsets("hello", kP, 0, 10) == std::vector<std::uint64_t>{0, 1, 5, 6, 9}));
  f.append({rec(7)});
  BOOST_CHECK_EQUAL(*f.log->head("hello", kP), 7u);
  f.open();  // the new head is on disk
  BOOST_CHECK_EQUAL(*f.log->head("hello", kP), 7u);
  BOOST_CHECK_EQUAL(*f.log->first_after_gap("hello", kP), 9u);
  BOOST_CHECK(f.append({rec(3)})[0] == DafkaAppend::kDuplicate);  // below the head: given up for good
}

BOOST_AUTO_TEST_CASE(skip_gap_without_a_gap_changes_nothing) {
  Fixture f;
  std::uint64_t skipped = 99;
  BOOST_REQUIRE(f.log->skip_gap("hello", kP, &skipped).ok());  // unknown partition
  BOOST_CHECK_EQUAL(skipped, 0u);
  f.append({rec(0), rec(1)});
  BOOST_REQUIRE(f.log->skip_gap("hello", kP, &skipped).ok());
  BOOST_CHECK_EQUAL(skipped, 0u);
  BOOST_CHECK_EQUAL(*f.log->head("hello", kP), 1u);
}

BOOST_AUTO_TEST_CASE(skip_gap_of_a_partition_missing_offset_zero_gives_it_a_head) {
  Fixture f;
  f.open(10);
  f.append({rec(4), rec(5)});
  BOOST_CHECK(!f.log->head("hello", kP));
  BOOST_CHECK(f.append({rec(20)})[0] == DafkaAppend::kTooFar);  // the wedge: 0 never comes
  std::uint64_t skipped = 0;
  BOOST_REQUIRE(f.log->skip_gap("hello", kP, &skipped).ok());
  BOOST_CHECK_EQUAL(skipped, 4u);
  BOOST_CHECK_EQUAL(*f.log->head("hello", kP), 5u);
  BOOST_CHECK(f.append({rec(12)})[0] == DafkaAppend::kStored);  // within reach again
}

BOOST_AUTO_TEST_CASE(partition_count_is_kept_without_a_scan) {
  Fixture f;
  BOOST_CHECK_EQUAL(f.log->partition_count(), 0u);
  f.append({rec(0), rec(1), rec(0, "hello", kQ), rec(3, "other")});
  BOOST_CHECK_EQUAL(f.log->partition_count(), 3u);
  f.append({rec(2), rec(1, "hello", kQ)});
  BOOST_CHECK_EQUAL(f.log->partition_count(), 3u);
  f.open();
  BOOST_CHECK_EQUAL(f.log->partition_count(), 3u);
}

// next_view() hands out the record where RocksDB holds it: it must stay
// there until the next call, also in a table on disk (records of 8 KiB: a
// table block each, so moving on frees the block the view points into;
// ASan reports a use after free if the cursor moves on early), and while
// appends go on.
BOOST_AUTO_TEST_CASE(a_view_stays_valid_until_the_next_call) {
  Fixture f;
  auto big = [](std::uint64_t offset) {
    DafkaRecord r = rec(offset);
    r.content = std::string(8192, static_cast<char>('a' + offset % 26)) + std::to_string(offset);
    return r;
  };
  std::vector<DafkaRecord> records;
  for (std::uint64_t i = 0; i < 8; ++i) records.push_back(big(i));
  f.append(records);
  BOOST_REQUIRE(f.db->db()->Flush(rocksdb::FlushOptions(), f.db->handle(zstore::storage::Column::kDafkaRecords)).ok());
  f.append({big(8), big(9)});  // in the memtable
  auto cursor = f.log->read("hello", kP, 0, 100);
  zstore::storage::DafkaRecordView v;
  std::uint64_t n = 0;
  while (cursor->next_view(&v)) {
    f.append({big(10 + n)});  // appends go on beside the cursor
    BOOST_CHECK_EQUAL(v.offset, n);
    BOOST_CHECK_EQUAL(v.subject, "hello");
    BOOST_CHECK_EQUAL(v.partition, kP);
    BOOST_CHECK(v.content == big(n).content);
    ++n;
  }
  BOOST_REQUIRE(cursor->status().ok());
  BOOST_CHECK_EQUAL(n, 10u);  // the cursor's view of the log is the one at read()
  // next() and next_view() interleave: each call moves on by one record.
  auto mixed = f.log->read("hello", kP, 3, 4);
  DafkaRecord r;
  BOOST_REQUIRE(mixed->next(&r));
  BOOST_CHECK(r == big(3));
  BOOST_REQUIRE(mixed->next_view(&v));
  BOOST_CHECK_EQUAL(v.offset, 4u);
  BOOST_REQUIRE(mixed->next(&r));
  BOOST_CHECK(r == big(5));
  BOOST_REQUIRE(mixed->next_view(&v));
  BOOST_CHECK(v.content == big(6).content);
  BOOST_CHECK(!mixed->next_view(&v));
}
