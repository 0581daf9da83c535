// DafkaLog record runs (dafka_log_internal.h): consecutive records of one
// append are one RocksDB entry, read back from any offset, trimmed only
// where wholly below the floor, mixed with single records of databases
// written before runs, and reported when damaged.
#include <boost/test/unit_test.hpp>
#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/utilities/checkpoint.h>

#include <filesystem>
#include <fstream>

#include <memory>
#include <string>
#include <vector>

#include "protocol/byte_order.h"
#include "storage/dafka/dafka_log.h"
#include "storage/dafka/dafka_log_internal.h"
#include "tests/support/test_support.h"

using zstore::storage::Column;
using zstore::storage::DafkaAppend;
using zstore::storage::DafkaLog;
using zstore::storage::DafkaPartitionStats;
using zstore::storage::DafkaRecord;
using zstore::storage::Database;
using zstore::storage::DatabaseOptions;
using zstore::testing::TempDir;

namespace {

const std::string kP = "0123456789ABCDEF0123456789ABCDEF";

DafkaRecord rec(std::uint64_t offset, std::size_t size = 0) {
  std::string content = "content " + std::to_string(offset);
  if (size > content.size()) content.append(size - content.size(), static_cast<char>('a' + offset % 26));
  return {"hello", kP, offset, content};
}

std::vector<DafkaRecord> recs(std::uint64_t from, std::uint64_t to, std::size_t size = 0) {
  std::vector<DafkaRecord> out;
  for (std::uint64_t i = from; i < to; ++i) out.push_back(rec(i, size));
  return out;
}

struct Fixture {
  TempDir dir;
  std::unique_ptr<Database> db;
  std::unique_ptr<DafkaLog> log;
  Fixture() { open(); }
  void open() {
    log.reset();
    db.reset();
    BOOST_REQUIRE(Database::Open(dir.str(), DatabaseOptions{}, &db).ok());
    BOOST_REQUIRE(DafkaLog::Open(db.get(), &log).ok());
  }
  void append(const std::vector<DafkaRecord>& records) {
    std::vector<DafkaAppend> out;
    BOOST_REQUIRE(log->append(records, &out).ok());
    for (auto o : out) BOOST_REQUIRE(o == DafkaAppend::kStored);
  }
  // The records read back, checked against rec() of their offset.
  std::vector<std::uint64_t> read(std::uint64_t from, std::uint64_t count, std::size_t size = 0) {
    std::vector<std::uint64_t> out;
    auto cursor = log->read("hello", kP, from, count);
    zstore::storage::DafkaRecordView v;
    while (cursor->next_view(&v)) {
      BOOST_REQUIRE(v.content == rec(v.offset, size).content);
      out.push_back(v.offset);
    }
    BOOST_REQUIRE(cursor->status().ok());
    return out;
  }
  // The raw dafka_records entries: their value sizes.
  std::vector<std::size_t> entries() {
    std::vector<std::size_t> out;
    std::unique_ptr<rocksdb::Iterator> it(
        db->db()->NewIterator(rocksdb::ReadOptions(), db->handle(Column::kDafkaRecords)));
    for (it->SeekToFirst(); it->Valid(); it->Next()) out.push_back(it->value().size());
    BOOST_REQUIRE(it->status().ok());
    return out;
  }
  // Retention's trim of the partition from floor 0 to new_floor (records
  // of recs() below it), required to apply.
  void trim_to(std::uint64_t new_floor) {
    DafkaPartitionStats seen = log->partitions_after(nullptr, 1).at(0);
    std::uint64_t bytes = 0;
    for (const auto& r : recs(0, new_floor)) bytes += r.content.size();
    bool applied = false;
    BOOST_REQUIRE(log->trim(seen, new_floor, new_floor, bytes, &applied).ok());
    BOOST_REQUIRE(applied);
  }
  void put_raw(const std::string& key, const std::string& value) {
    BOOST_REQUIRE(db->db()->Put(rocksdb::WriteOptions(), db->handle(Column::kDafkaRecords), key, value).ok());
  }
};

std::vector<std::uint64_t> range(std::uint64_t from, std::uint64_t to) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t i = from; i < to; ++i) out.push_back(i);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(consecutive_records_of_one_append_are_one_entry_read_from_any_offset) {
  Fixture f;
  f.append(recs(0, 100));
  BOOST_CHECK_EQUAL(f.entries().size(), 1u);
  BOOST_CHECK(f.read(0, 1000) == range(0, 100));
  BOOST_CHECK(f.read(37, 5) == range(37, 42));  // starts and ends inside the run
  BOOST_CHECK(f.read(99, 10) == range(99, 100));
  BOOST_CHECK(f.read(100, 10).empty());
  f.append(recs(100, 101));  // one record alone: a single-record entry
  BOOST_CHECK_EQUAL(f.entries().size(), 2u);
  f.open();  // from the tables and the log, after a restart
  BOOST_CHECK(f.read(95, 10) == range(95, 101));
  BOOST_CHECK_EQUAL(*f.log->head("hello", kP), 100u);
}

BOOST_AUTO_TEST_CASE(a_cursor_at_its_end_stays_there) {
  Fixture f;
  f.append(recs(0, 10));
  auto cursor = f.log->read("hello", kP, 5, 100);
  zstore::storage::DafkaRecordView v;
  std::uint64_t n = 0;
  while (cursor->next_view(&v)) ++n;
  BOOST_CHECK_EQUAL(n, 5u);
  BOOST_CHECK(!cursor->next_view(&v));  // again: no step past the end
  BOOST_CHECK(!cursor->next_view(&v));
  BOOST_CHECK(cursor->status().ok());
}

BOOST_AUTO_TEST_CASE(a_run_holds_at_most_64_kib_of_records) {
  Fixture f;
  f.append(recs(0, 40, 4000));
  auto sizes = f.entries();
  BOOST_CHECK_EQUAL(sizes.size(), 3u);  // 16 records of 4000 bytes per run
  for (std::size_t s : sizes) BOOST_CHECK_LE(s, zstore::storage::dafka_internal::kMaxRunBytes);
  BOOST_CHECK(f.read(0, 100, 4000) == range(0, 40));
  f.append({rec(40, 100000)});  // larger than a run: stored alone
  BOOST_CHECK_EQUAL(f.entries().back(), 100000u);
}

BOOST_AUTO_TEST_CASE(records_beyond_a_gap_and_those_filling_it_read_in_order_after_a_reopen) {
  Fixture f;
  f.append(recs(0, 10));
  f.append(recs(20, 30));  // beyond the gap
  f.open();
  BOOST_CHECK_EQUAL(*f.log->head("hello", kP), 9u);
  BOOST_CHECK_EQUAL(*f.log->first_after_gap("hello", kP), 20u);
  f.append(recs(10, 20));
  BOOST_CHECK_EQUAL(*f.log->head("hello", kP), 29u);
  BOOST_CHECK_EQUAL(f.entries().size(), 3u);
  BOOST_CHECK(f.read(5, 20) == range(5, 25));
}

BOOST_AUTO_TEST_CASE(a_trim_inside_a_run_keeps_every_record_at_or_above_the_floor) {
  Fixture f;
  f.append(recs(0, 100));
  f.append(recs(100, 200));
  f.trim_to(50);
  BOOST_CHECK_EQUAL(f.entries().size(), 2u);       // the run 0-99 holds 50-99: kept whole
  BOOST_CHECK(f.read(0, 1000) == range(50, 200));  // nothing below the floor is returned
  BOOST_CHECK(f.read(10, 45) == range(50, 55));    // [10, 55) from the floor on
  BOOST_CHECK_EQUAL(f.log->partitions_after(nullptr, 1).at(0).records, 150u);
  f.open();
  BOOST_CHECK(f.read(0, 1000) == range(50, 200));
}

BOOST_AUTO_TEST_CASE(a_trim_removes_the_runs_wholly_below_the_floor) {
  Fixture f;
  f.append(recs(0, 100));
  f.append(recs(100, 200));
  f.trim_to(150);
  BOOST_CHECK_EQUAL(f.entries().size(), 1u);  // 0-99 went; 100-199 holds 150-199
  BOOST_CHECK(f.read(0, 1000) == range(150, 200));
  BOOST_CHECK_EQUAL(f.log->partitions_after(nullptr, 1).at(0).records, 50u);
}

// A database written before runs holds one entry per record, and a head of
// the first format: read as it is, with the runs appended after it.
BOOST_AUTO_TEST_CASE(records_written_before_runs_read_together_with_runs) {
  Fixture f;
  f.log.reset();
  for (std::uint64_t i = 0; i < 5; ++i) f.put_raw(zstore::storage::dafka_record_key("hello", kP, i), rec(i).content);
  std::string next;
  zstore::protocol::put_be<std::uint64_t>(next, 5);
  BOOST_REQUIRE(f.db->db()
                    ->Put(rocksdb::WriteOptions(), f.db->handle(Column::kDafkaHeads),
                          zstore::storage::dafka_partition_prefix("hello", kP), next)
                    .ok());
  f.open();
  BOOST_CHECK_EQUAL(*f.log->head("hello", kP), 4u);
  BOOST_CHECK_EQUAL(f.log->partitions_after(nullptr, 1).at(0).records, 5u);
  f.append(recs(5, 10));
  BOOST_CHECK_EQUAL(f.entries().size(), 6u);
  BOOST_CHECK(f.read(0, 100) == range(0, 10));
  BOOST_CHECK(f.read(3, 4) == range(3, 7));
}

BOOST_AUTO_TEST_CASE(a_damaged_run_is_an_error_not_a_short_read) {
  Fixture f;
  f.append(recs(0, 10));
  std::string key = zstore::storage::dafka_record_key("hello", kP, 20) + zstore::storage::dafka_internal::kRunTag;
  std::string value;
  zstore::protocol::put_be<std::uint32_t>(value, 3);  // three records, the last one's bytes missing
  for (std::uint64_t i = 18; i < 20; ++i) {
    zstore::protocol::put_be<std::uint32_t>(value, static_cast<std::uint32_t>(rec(i).content.size()));
    value += rec(i).content;
  }
  zstore::protocol::put_be<std::uint32_t>(value, 100);
  f.put_raw(key, value);
  auto cursor = f.log->read("hello", kP, 0, 100);
  DafkaRecord r;
  std::uint64_t n = 0;
  while (cursor->next(&r)) ++n;
  BOOST_CHECK_EQUAL(n, 12u);  // 0-9, then 18 and 19
  BOOST_CHECK(!cursor->status().ok());
  // A run claiming more records than offsets below its last one.
  f.put_raw(zstore::storage::dafka_record_key("hello", kP, 1) + zstore::storage::dafka_internal::kRunTag,
            std::string("\x00\x00\x00\x05", 4));
  auto early = f.log->read("hello", kP, 0, 100);
  while (early->next(&r)) {
  }
  BOOST_CHECK(!early->status().ok());
}

namespace {

std::uint64_t property(Fixture& f, const char* name) {
  std::uint64_t v = 0;
  BOOST_REQUIRE(f.db->db()->GetIntProperty(f.db->handle(Column::kDafkaRecords), name, &v));
  return v;
}

void flush_records(Fixture& f) {
  BOOST_REQUIRE(f.db->db()->Flush(rocksdb::FlushOptions(), f.db->handle(Column::kDafkaRecords)).ok());
}

}  // namespace

// Runs of 4 KiB and more are written once, to blob files, at the flush;
// small entries stay in the tables. Retention frees the blob files once
// compaction has dropped the keys into them: the disk does not keep them.
BOOST_AUTO_TEST_CASE(large_runs_live_in_blob_files_that_retention_frees) {
  Fixture f;
  f.append(recs(0, 3));  // 3 short records: 60 bytes, inline
  flush_records(f);
  BOOST_CHECK_EQUAL(property(f, "rocksdb.total-blob-file-size"), 0u);
  for (std::uint64_t first = 3; first < 403; first += 100) f.append(recs(first, first + 100, 1000));
  flush_records(f);
  BOOST_CHECK_GE(property(f, "rocksdb.total-blob-file-size"), 400u * 1000u);
  BOOST_CHECK(f.read(0, 3) == range(0, 3));
  BOOST_CHECK(f.read(3, 1000, 1000) == range(3, 403));
  f.open();  // the blob files are read after a restart too
  BOOST_CHECK(f.read(3, 1000, 1000) == range(3, 403));

  DafkaPartitionStats seen = f.log->partitions_after(nullptr, 1).at(0);
  bool applied = false;
  BOOST_REQUIRE(f.log->trim(seen, seen.next, seen.records, seen.bytes, &applied).ok());
  BOOST_REQUIRE(applied);
  rocksdb::CompactRangeOptions all;
  all.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  BOOST_REQUIRE(f.db->db()->CompactRange(all, f.db->handle(Column::kDafkaRecords), nullptr, nullptr).ok());
  BOOST_CHECK_EQUAL(property(f, "rocksdb.total-blob-file-size"), 0u);
  BOOST_CHECK(f.read(0, 1000).empty());
}

// zstored's online backup is a RocksDB checkpoint (server/http/db_admin.h): it
// carries the blob files, so a backup of runs reads back whole.
BOOST_AUTO_TEST_CASE(a_checkpoint_carries_the_blob_files) {
  Fixture f;
  f.append(recs(0, 200, 1000));
  flush_records(f);
  BOOST_REQUIRE_GT(property(f, "rocksdb.total-blob-file-size"), 0u);
  TempDir backups;
  std::string target = (backups.path() / "cp").string();
  rocksdb::Checkpoint* raw = nullptr;
  BOOST_REQUIRE(rocksdb::Checkpoint::Create(f.db->db(), &raw).ok());
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  BOOST_REQUIRE(checkpoint->CreateCheckpoint(target).ok());
  f.log.reset();
  f.db.reset();  // the original goes: only the checkpoint is read
  std::filesystem::remove_all(f.dir.path());
  std::unique_ptr<Database> db;
  BOOST_REQUIRE(Database::Open(target, DatabaseOptions{}, &db).ok());
  std::unique_ptr<DafkaLog> log;
  BOOST_REQUIRE(DafkaLog::Open(db.get(), &log).ok());
  auto cursor = log->read("hello", kP, 0, 1000);
  DafkaRecord r;
  std::uint64_t n = 0;
  while (cursor->next(&r)) {
    BOOST_REQUIRE(r == rec(n, 1000));
    ++n;
  }
  BOOST_CHECK(cursor->status().ok());
  BOOST_CHECK_EQUAL(n, 200u);
}

namespace {

std::filesystem::path only_blob_file(const Fixture& f) {
  std::filesystem::path found;
  for (const auto& e : std::filesystem::directory_iterator(f.dir.path())) {
    if (e.path().extension() != ".blob") continue;
    BOOST_REQUIRE_MESSAGE(found.empty(), "more than one blob file in " << f.dir.str());
    found = e.path();
  }
  BOOST_REQUIRE_MESSAGE(!found.empty(), "no blob file in " << f.dir.str());
  return found;
}

// 100 records of 1000 bytes flushed to one blob file, the database closed.
std::filesystem::path closed_with_a_blob_file(Fixture& f) {
  f.append(recs(0, 100, 1000));
  flush_records(f);
  f.log.reset();
  f.db.reset();
  return only_blob_file(f);
}

// Overwrites n bytes at offset at of p.
void scribble(const std::filesystem::path& p, std::uint64_t at, std::size_t n) {
  std::fstream file(p, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(static_cast<std::streamoff>(at));
  file << std::string(n, '\xA5');
  BOOST_REQUIRE(file.good());
}

}  // namespace

// A blob file damaged on disk: the records in the damaged run are a read
// error (a cursor's status, as for a damaged table block), never wrong
// bytes served as records; the records before it still read.
BOOST_AUTO_TEST_CASE(a_damaged_blob_file_is_a_read_error_not_wrong_records) {
  Fixture f;
  for (std::uint64_t first = 0; first < 400; first += 100) f.append(recs(first, first + 100, 1000));
  flush_records(f);
  f.log.reset();
  f.db.reset();
  auto blob = only_blob_file(f);
  scribble(blob, std::filesystem::file_size(blob) / 2, 64);
  f.open();
  auto cursor = f.log->read("hello", kP, 0, 1000);
  zstore::storage::DafkaRecordView v;
  std::uint64_t n = 0;
  while (cursor->next_view(&v)) {
    BOOST_REQUIRE(v.content == rec(v.offset, 1000).content);
    BOOST_REQUIRE_EQUAL(v.offset, n);
    ++n;
  }
  BOOST_TEST_MESSAGE("read " << n << " records, then: " << cursor->status().message());
  BOOST_CHECK_LT(n, 400u);
  BOOST_CHECK_GT(n, 0u);
  BOOST_CHECK(!cursor->status().ok());
  BOOST_CHECK_MESSAGE(cursor->status().IsCorruption(), cursor->status().ToString());
}

// A blob file the database lists but that is gone: the open fails with a
// message naming it, rather than serving a log with holes.
BOOST_AUTO_TEST_CASE(a_missing_blob_file_stops_the_open) {
  Fixture f;
  auto blob = closed_with_a_blob_file(f);
  std::filesystem::remove(blob);
  for (bool read_only : {false, true}) {  // zstored, and zstore-dump
    std::unique_ptr<Database> db;
    DatabaseOptions options;
    options.read_only = read_only;
    auto s = Database::Open(f.dir.str(), options, &db);
    BOOST_TEST_MESSAGE("open: " << (s.ok() ? std::string("ok") : s.message()));
    BOOST_CHECK(s.IsCorruption());
    BOOST_CHECK(s.message().find("damaged database") != std::string::npos);
    BOOST_CHECK(s.message().find(blob.filename().string()) != std::string::npos);
  }
}

// A blob file cut short (a partial copy, a full disk during a restore) is
// refused at the open the same way.
BOOST_AUTO_TEST_CASE(a_truncated_blob_file_stops_the_open) {
  Fixture f;
  auto blob = closed_with_a_blob_file(f);
  std::filesystem::resize_file(blob, std::filesystem::file_size(blob) / 2);
  std::unique_ptr<Database> db;
  auto s = Database::Open(f.dir.str(), DatabaseOptions{}, &db);
  BOOST_TEST_MESSAGE("open: " << (s.ok() ? std::string("ok") : s.message()));
  BOOST_CHECK(s.IsCorruption());
  BOOST_CHECK(s.message().find("bytes, the database recorded") != std::string::npos);
  std::filesystem::resize_file(blob, 0);
  BOOST_CHECK(!Database::Open(f.dir.str(), DatabaseOptions{}, &db).ok());
}

// parse_dafka_record_key reads every key the log writes (a run's last
// offset, a single record's offset, also one whose last byte equals the run
// tag) and refuses what is not a record key.
BOOST_AUTO_TEST_CASE(record_keys_parse_into_partition_and_last_offset) {
  using zstore::storage::parse_dafka_record_key;
  Fixture f;
  f.append(recs(0, 1));   // offset 0 alone: a single record
  f.append(recs(1, 2));   // offset 1 alone: its key ends in 0x01, the tag's byte
  f.append(recs(2, 10));  // a run, last offset 9
  std::vector<std::uint64_t> lasts;
  std::unique_ptr<rocksdb::Iterator> it(
      f.db->db()->NewIterator(rocksdb::ReadOptions(), f.db->handle(Column::kDafkaRecords)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    zstore::storage::DafkaPartitionKey p;
    std::uint64_t last = 0;
    BOOST_REQUIRE(parse_dafka_record_key(std::string_view(it->key().data(), it->key().size()), &p, &last));
    BOOST_TEST(p.first == "hello");
    BOOST_TEST(p.second == kP);
    lasts.push_back(last);
  }
  BOOST_TEST(lasts == (std::vector<std::uint64_t>{0, 1, 9}), boost::test_tools::per_element());
  zstore::storage::DafkaPartitionKey p;
  std::uint64_t last = 0;
  std::string prefix = zstore::storage::dafka_partition_prefix("hello", kP);
  BOOST_TEST(!parse_dafka_record_key(prefix, &p, &last));
  BOOST_TEST(!parse_dafka_record_key(prefix + "1234567", &p, &last));       // 7 offset bytes
  BOOST_TEST(!parse_dafka_record_key(prefix + "12345678\x02", &p, &last));  // not the run tag
  BOOST_TEST(!parse_dafka_record_key(prefix + "1234567890", &p, &last));    // 10 bytes
  BOOST_TEST(!parse_dafka_record_key("", &p, &last));
}
