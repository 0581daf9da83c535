// zstore-dump on databases written through the storage API: filters, the
// text and JSON formats, stats, error exits (2 for usage and unreadable
// dirs, 1 for a corrupt entry), and the data dir left untouched.
#include <boost/test/unit_test.hpp>

#include <rocksdb/db.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <vector>

#include "storage/chp/chp_store.h"
#include "storage/dafka/dafka_log.h"
#include "storage/db/database.h"
#include "tests/dump/dump_runner.h"
#include "tests/support/test_support.h"

using namespace zstore::storage;
using zstore::testing::DumpRun;
using zstore::testing::field_bytes;
using zstore::testing::fingerprint;
using zstore::testing::json_lines;
using zstore::testing::run_dump;
using zstore::testing::TempDir;

namespace {

const std::string kBinary("bin\0\xff\xfe", 6);
constexpr std::uint64_t kExpiry = 1795420187088;

std::unique_ptr<Database> open_rw(const std::string& dir) {
  std::unique_ptr<Database> db;
  Status s = Database::Open(dir, DatabaseOptions{}, &db);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.message());
  return db;
}

// With per-key history (zstored --chp-key-history): chp_versions too.
void write_chp(Database* db) {
  std::unique_ptr<ChpStore> store;
  BOOST_REQUIRE(ChpStore::Open(db, &store, zstore::storage::kDefaultHistoryEntries,
                               zstore::storage::ChpKeyIndex::kDefaultMaxBytes, true)
                    .ok());
  std::vector<ChpWrite> writes = {{"/a/1", std::string(16, 'u'), "", "one", 0, 0},
                                  {"/a/2", std::string(16, 'v'), "k=v\n", kBinary, 0, 0},
                                  {"/b/1", std::string(16, 'w'), "ttl=60\n", "x", kExpiry, 0}};
  BOOST_REQUIRE(store->apply(writes).ok());
}

void write_dafka(Database* db) {
  std::unique_ptr<DafkaLog> log;
  BOOST_REQUIRE(DafkaLog::Open(db, &log).ok());
  std::vector<DafkaRecord> records;
  for (std::uint64_t i = 0; i < 10; ++i) records.push_back({"t1", "P1", i, "c" + std::to_string(i)});
  for (std::uint64_t i = 0; i < 5; ++i) records.push_back({"t1", "P2", i, "d" + std::to_string(i)});
  for (std::uint64_t i = 0; i < 3; ++i) records.push_back({"t2", "P1", i, kBinary + std::to_string(i)});
  for (std::uint64_t i : {0, 1, 5}) records.push_back({"gap", "G", i, "g" + std::to_string(i)});
  std::vector<DafkaAppend> outcomes;
  BOOST_REQUIRE(log->append(records, &outcomes).ok());
}

// A closed database with 3 CHP keys and 21 Dafka records in 4 partitions.
struct Written {
  TempDir dir;
  Written() {
    auto db = open_rw(dir.str());
    write_chp(db.get());
    write_dafka(db.get());
    BOOST_REQUIRE(db->close().ok());
  }
  DumpRun dump(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--data-dir", dir.str()});
    return run_dump(args);
  }
  std::vector<nlohmann::json> json(std::vector<std::string> args) const {
    args.insert(args.begin(), "--format=json");
    DumpRun r = dump(args);
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "exit " + std::to_string(r.exit_code) + ": " + r.err);
    BOOST_TEST(r.err.empty(), "stderr (not a terminal) must stay silent: " + r.err);
    return json_lines(r.out);
  }
};

// "subject/partition/offset" of each dafka line.
std::vector<std::string> ids(const std::vector<nlohmann::json>& lines) {
  std::vector<std::string> out;
  for (const auto& j : lines) {
    out.push_back(field_bytes(j, "subject") + "/" + field_bytes(j, "partition") + "/" +
                  std::to_string(j["offset"].get<std::uint64_t>()));
  }
  return out;
}

void expect_usage_error(const DumpRun& r, const std::string& message) {
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.out.empty());
  BOOST_TEST(r.err.find(message) != std::string::npos, "stderr: " + r.err);
}

}  // namespace

BOOST_AUTO_TEST_CASE(chp_json_has_every_field_with_exact_bytes) {
  Written w;
  auto lines = w.json({"chp"});
  BOOST_REQUIRE_EQUAL(lines.size(), 3u);
  BOOST_TEST(field_bytes(lines[0], "key") == "/a/1");
  BOOST_TEST(lines[0]["seq"] == 1);
  BOOST_TEST(lines[0]["uuid"] == "75757575757575757575757575757575");  // sixteen 'u' bytes
  BOOST_TEST(lines[0]["expires_at"].is_null());
  BOOST_TEST(field_bytes(lines[1], "value") == kBinary);
  BOOST_TEST(lines[1]["value_encoding"] == "base64");
  BOOST_TEST(field_bytes(lines[1], "props") == "k=v\n");
  BOOST_TEST(lines[2]["expires_at"] == kExpiry);
  BOOST_TEST(lines[2]["seq"] == 3);
}

BOOST_AUTO_TEST_CASE(chp_prefix_filters_keys) {
  Written w;
  auto lines = w.json({"chp", "--prefix", "/a/"});
  BOOST_REQUIRE_EQUAL(lines.size(), 2u);
  BOOST_TEST(lines[0]["key"] == "/a/1");
  BOOST_TEST(lines[1]["key"] == "/a/2");
  BOOST_TEST(w.json({"chp", "--prefix", "/zzz"}).empty());
}

BOOST_AUTO_TEST_CASE(dafka_dumps_every_record_in_order_including_after_a_gap) {
  Written w;
  auto lines = w.json({"dafka"});
  BOOST_REQUIRE_EQUAL(lines.size(), 21u);
  auto got = ids(lines);
  BOOST_TEST(got.front() == "t1/P1/0");  // key order: subject length first, then bytes
  BOOST_TEST(got.back() == "gap/G/5");
  BOOST_TEST((std::set<std::string>(got.begin(), got.end()).contains("gap/G/5")));
  BOOST_TEST((std::set<std::string>(got.begin(), got.end()).size() == 21u));
  for (const auto& j : lines) {
    if (j["subject"] == "t2") BOOST_TEST(field_bytes(j, "content") == kBinary + std::to_string(j["offset"].get<int>()));
    if (j["subject"] == "t1" && j["partition"] == "P1")
      BOOST_TEST(j["content"] == "c" + std::to_string(j["offset"].get<int>()));
  }
}

BOOST_AUTO_TEST_CASE(dafka_filters_by_topic_partition_from_and_count) {
  Written w;
  BOOST_TEST(w.json({"dafka", "--topic", "t1"}).size() == 15u);
  auto p2 = ids(w.json({"dafka", "--topic", "t1", "--partition", "P2"}));
  BOOST_TEST(p2 == (std::vector<std::string>{"t1/P2/0", "t1/P2/1", "t1/P2/2", "t1/P2/3", "t1/P2/4"}),
             boost::test_tools::per_element());
  BOOST_TEST(w.json({"dafka", "--partition", "P1"}).size() == 13u);
  auto from = ids(w.json({"dafka", "--from", "8"}));
  BOOST_TEST(from == (std::vector<std::string>{"t1/P1/8", "t1/P1/9"}), boost::test_tools::per_element());
  auto window = ids(w.json({"dafka", "--from", "3", "--count", "2"}));
  BOOST_TEST(window == (std::vector<std::string>{"t1/P1/3", "t1/P1/4", "t1/P2/3", "t1/P2/4", "gap/G/5"}),
             boost::test_tools::per_element());
  BOOST_TEST(w.json({"dafka", "--count", "0"}).empty());
  BOOST_TEST(w.json({"dafka", "--topic", "t"}).empty());  // exact subject, not a prefix
}

BOOST_AUTO_TEST_CASE(stats_json_counts_columns_and_lists_heads) {
  Written w;
  auto lines = w.json({"stats"});
  BOOST_REQUIRE_EQUAL(lines.size(), 1u);
  const auto& s = lines[0];
  BOOST_TEST(s["layout_version"] == "4");
  BOOST_TEST(s["chp_last_sequence"] == 3);
  BOOST_TEST(s["node_address"].is_null());
  BOOST_TEST(s["chp_synced"] == true);
  std::map<std::string, std::uint64_t> keys;
  for (const auto& c : s["columns"]) keys[c["name"]] = c["keys"];
  BOOST_TEST(keys["chp_map"] == 3u);
  BOOST_TEST(keys["chp_expiry"] == 1u);
  // Entries, not records: one run per append and partition of consecutive
  // offsets (t1/P1, t1/P2, t2/P1, gap/G 0-1) and gap/G's 5 alone.
  BOOST_TEST(keys["dafka_records"] == 5u);
  BOOST_TEST(keys["dafka_heads"] == 4u);
  BOOST_TEST(keys["meta"] == 6u);  // layout version, clean stop, last sequence, history count, key count, versions from
  BOOST_TEST(keys["chp_versions"] == 3u);  // each update again, by key
  BOOST_TEST(keys["chp_history"] == 1u);   // the three updates, applied together: one block
  std::map<std::string, nlohmann::json> heads;
  for (const auto& p : s["dafka_partitions"])
    heads[p["subject"].get<std::string>() + "/" + p["partition"].get<std::string>()] = p["head"];
  BOOST_TEST(heads["t1/P1"] == 9);
  BOOST_TEST(heads["t1/P2"] == 4);
  BOOST_TEST(heads["t2/P1"] == 2);
  BOOST_TEST(heads["gap/G"] == 1);  // 5 is kept beyond the gap
}

BOOST_AUTO_TEST_CASE(text_formats_are_aligned_and_escape_binary) {
  Written w;
  DumpRun chp = w.dump({"chp"});
  BOOST_REQUIRE_EQUAL(chp.exit_code, 0);
  BOOST_TEST(chp.out.find("key         /a/1\nseq         1\n") != std::string::npos, chp.out);
  BOOST_TEST(chp.out.find("value       bin\\x00\\xff\\xfe\n") != std::string::npos, chp.out);
  BOOST_TEST(chp.out.find("props       ttl=60\\n\n") != std::string::npos, chp.out);
  BOOST_TEST(chp.out.find("expires_at  2026-11-23T07:49:47.088Z (1795420187088)\n") != std::string::npos, chp.out);
  DumpRun dafka = w.dump({"dafka", "--topic", "t1", "--partition", "P1"});
  BOOST_REQUIRE_EQUAL(dafka.exit_code, 0);
  BOOST_TEST(dafka.out.find("subject t1  partition P1  head 9  floor 0\n     0  c0\n     1  c1\n") != std::string::npos,
             dafka.out);
  DumpRun stats = w.dump({"stats"});
  BOOST_REQUIRE_EQUAL(stats.exit_code, 0);
  BOOST_TEST(stats.out.find("chp last sequence   3\n") != std::string::npos, stats.out);
  BOOST_TEST(stats.out.find("dafka_records              5") != std::string::npos, stats.out);
  BOOST_TEST(stats.out.find("dafka partitions    4\n") != std::string::npos, stats.out);
}

BOOST_AUTO_TEST_CASE(dumps_leave_the_data_dir_unchanged) {
  Written w;
  auto before = fingerprint(w.dir.str());
  BOOST_REQUIRE(!before.empty());
  for (const auto& cmd : {"chp", "dafka", "stats"}) {
    BOOST_TEST(w.dump({cmd}).exit_code == 0);
    BOOST_TEST(w.dump({"--format", "json", cmd}).exit_code == 0);
  }
  auto after = fingerprint(w.dir.str());
  BOOST_TEST((before == after));
  for (const auto& [name, print] : after) BOOST_TEST_CONTEXT(name) {
      BOOST_TEST(before.contains(name));
    }
}

BOOST_AUTO_TEST_CASE(unusable_dirs_exit_2_with_a_message) {
  TempDir tmp;
  expect_usage_error(run_dump({"--data-dir", (tmp.path() / "missing").string(), "chp"}), "does not exist");
  std::ofstream((tmp.path() / "file").string()) << "x";
  expect_usage_error(run_dump({"--data-dir", (tmp.path() / "file").string(), "stats"}), "not a directory");
  std::filesystem::create_directory(tmp.path() / "empty");
  expect_usage_error(run_dump({"--data-dir", (tmp.path() / "empty").string(), "chp"}), "no zstore database");
  BOOST_TEST(std::filesystem::is_empty(tmp.path() / "empty"));  // nothing created

  std::string plain = (tmp.path() / "plain").string();
  {
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* raw = nullptr;
    BOOST_REQUIRE(rocksdb::DB::Open(o, plain, &raw).ok());
    BOOST_REQUIRE(raw->Put(rocksdb::WriteOptions(), "k", "v").ok());
    delete raw;
  }
  expect_usage_error(run_dump({"--data-dir", plain, "dafka"}), "not a zstore one");
}

BOOST_AUTO_TEST_CASE(unknown_layout_version_exits_2) {
  TempDir dir;
  {
    auto db = open_rw(dir.str());
    BOOST_REQUIRE(
        db->db()->Put(rocksdb::WriteOptions(), db->handle(Column::kMeta), std::string(kMetaLayoutVersion), "5").ok());
    BOOST_REQUIRE(db->close().ok());
  }
  expect_usage_error(run_dump({"--data-dir", dir.str(), "chp"}), "layout version 5");
}

BOOST_AUTO_TEST_CASE(bad_flags_exit_2_with_a_message) {
  Written w;
  expect_usage_error(run_dump({"chp"}), "--data-dir");
  expect_usage_error(w.dump({"chp", "--bogus"}), "bogus");
  expect_usage_error(w.dump({"--format", "xml", "chp"}), "--format");
  expect_usage_error(w.dump({"dafka", "--count", "-3"}), "--count");
  expect_usage_error(w.dump({"chp", "--topic", "t1"}), "does not apply");
  expect_usage_error(w.dump({}), "missing command");
  DumpRun help = run_dump({"--help"});
  BOOST_TEST(help.exit_code == 0);
  BOOST_TEST(help.out.find("usage: zstore-dump") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_corrupt_entry_exits_1) {
  TempDir dir;
  {
    auto db = open_rw(dir.str());
    write_chp(db.get());
    BOOST_REQUIRE(db->db()->Put(rocksdb::WriteOptions(), db->handle(Column::kChpMap), "/a/3", "garbage").ok());
    BOOST_REQUIRE(db->close().ok());
  }
  DumpRun r = run_dump({"--data-dir", dir.str(), "--format", "json", "chp"});
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(r.err.find("corrupt CHP entry") != std::string::npos, r.err);
  BOOST_TEST(json_lines(r.out).size() == 2u);  // the keys before it were dumped
}

namespace {

// A closed database whose Dafka records (3 appends of 20 records of 1 KiB)
// are in one blob file, which *blob names.
void write_blob_records(const std::string& dir, std::filesystem::path* blob) {
  auto db = open_rw(dir);
  std::unique_ptr<DafkaLog> log;
  BOOST_REQUIRE(DafkaLog::Open(db.get(), &log).ok());
  for (std::uint64_t first = 0; first < 60; first += 20) {
    std::vector<DafkaRecord> records;
    for (std::uint64_t i = first; i < first + 20; ++i) records.push_back({"t", "P", i, std::string(1024, 'r')});
    std::vector<DafkaAppend> outcomes;
    BOOST_REQUIRE(log->append(records, &outcomes).ok());
  }
  BOOST_REQUIRE(db->db()->Flush(rocksdb::FlushOptions(), db->handle(Column::kDafkaRecords)).ok());
  log.reset();
  BOOST_REQUIRE(db->close().ok());
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".blob") *blob = e.path();
  }
  BOOST_REQUIRE_MESSAGE(!blob->empty(), "no blob file");
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_damaged_blob_file_exits_1_after_the_records_before_it) {
  TempDir dir;
  std::filesystem::path blob;
  write_blob_records(dir.str(), &blob);
  {
    std::fstream file(blob, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(std::filesystem::file_size(blob) * 5 / 6));  // in the third run
    file << std::string(32, '\x5a');
  }
  DumpRun r = run_dump({"--data-dir", dir.str(), "--format", "json", "dafka"});
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(r.err.find("Corruption") != std::string::npos, r.err);
  BOOST_TEST(json_lines(r.out).size() == 40u);  // the two runs before the damage
}

// Like any damaged database (docs/dump.md): status 2, the file named.
BOOST_AUTO_TEST_CASE(a_missing_blob_file_exits_2_naming_it) {
  TempDir dir;
  std::filesystem::path blob;
  write_blob_records(dir.str(), &blob);
  std::filesystem::remove(blob);
  DumpRun r = run_dump({"--data-dir", dir.str(), "stats"});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.out.empty());
  BOOST_TEST(r.err.find(blob.filename().string()) != std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(an_io_error_while_opening_exits_1) {
  Written w;
  std::filesystem::remove(w.dir.path() / "CURRENT");
  std::filesystem::create_directory(w.dir.path() / "CURRENT");  // reading it fails with EISDIR
  DumpRun r = w.dump({"stats"});
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(r.err.find("IO error") != std::string::npos, r.err);
}

namespace {

// A database of n CHP keys.
void write_keys(const std::string& dir, int n) {
  auto db = open_rw(dir);
  std::unique_ptr<ChpStore> store;
  BOOST_REQUIRE(ChpStore::Open(db.get(), &store, zstore::storage::kDefaultHistoryEntries,
                               zstore::storage::ChpKeyIndex::kDefaultMaxBytes, true)
                    .ok());
  std::vector<ChpWrite> writes;
  for (int i = 0; i < n; ++i) writes.push_back({"/k/" + std::to_string(i), std::string(16, 'u'), "", "v", 0, 0, 0});
  BOOST_REQUIRE(store->apply(writes).ok());
  BOOST_REQUIRE(db->close().ok());
}

// Sets an environment variable for the scope (children inherit it).
struct ScopedEnv {
  std::string name;
  ScopedEnv(std::string n, const std::string& value) : name(std::move(n)) { ::setenv(name.c_str(), value.c_str(), 1); }
  ~ScopedEnv() { ::unsetenv(name.c_str()); }
};

}  // namespace

BOOST_AUTO_TEST_CASE(progress_shows_on_a_terminal_only) {
  TempDir dir;
  write_keys(dir.str(), 1000);
  ScopedEnv after("ZSTORE_DUMP_PROGRESS_AFTER_MS", "0");  // no need for a dump of seconds

  DumpRun piped = run_dump({"--data-dir", dir.str(), "chp"});
  BOOST_TEST(piped.exit_code == 0);
  BOOST_TEST(piped.err.empty(), piped.err);

  // script(1) runs the dump with stderr on a pseudo-terminal; stdout is dropped.
  TempDir logs;
  std::string command = zstore::testing::bin_path("zstore-dump") + " --data-dir " + dir.str() + " chp >/dev/null";
  zstore::testing::Process p("/usr/bin/script", {"-qec", command, "/dev/null"}, logs.path() / "tty");
  BOOST_REQUIRE(p.wait(std::chrono::seconds(30)) == 0);
  std::string tty = p.log();
  BOOST_TEST(tty.find("\rzstore-dump: 256 keys") != std::string::npos, tty);
  BOOST_TEST(tty.find("zstore-dump: 1000 keys") != std::string::npos, tty);
  BOOST_TEST(tty.find("/s") != std::string::npos, tty);

  // stats counts entries of every column family: 1000 keys, their 1000
  // versions, one history entry (a block: they were applied together) and
  // 6 meta entries.
  std::string stats = zstore::testing::bin_path("zstore-dump") + " --data-dir " + dir.str() + " stats >/dev/null";
  zstore::testing::Process q("/usr/bin/script", {"-qec", stats, "/dev/null"}, logs.path() / "tty-stats");
  BOOST_REQUIRE(q.wait(std::chrono::seconds(30)) == 0);
  BOOST_TEST(q.log().find("zstore-dump: 2007 entries counted") != std::string::npos, q.log());
}

BOOST_AUTO_TEST_CASE(stats_tell_an_incomplete_chp_map) {
  Written w;
  {
    auto db = open_rw(w.dir.str());
    std::unique_ptr<ChpStore> store;
    BOOST_REQUIRE(ChpStore::Open(db.get(), &store).ok());
    BOOST_REQUIRE(store->set_synced(false).ok());  // a follower in the middle of reloading
    BOOST_REQUIRE(db->close().ok());
  }
  BOOST_TEST(w.json({"stats"}).at(0)["chp_synced"] == false);
  DumpRun text = w.dump({"stats"});
  BOOST_TEST(text.out.find("chp map complete    no") != std::string::npos, text.out);
}

BOOST_AUTO_TEST_CASE(floors_left_by_retention_are_shown_by_stats_and_dafka) {
  Written w;
  {
    auto db = open_rw(w.dir.str());
    std::unique_ptr<DafkaLog> log;
    BOOST_REQUIRE(DafkaLog::Open(db.get(), &log).ok());
    DafkaPartitionStats seen;
    for (const auto& p : log->partitions_after(nullptr, 10))
      if (p.subject == "t1" && p.partition == "P1") seen = p;
    bool applied = false;
    BOOST_REQUIRE(log->trim(seen, 7, 7, 14, &applied).ok());  // c0..c6: 2 bytes each
    BOOST_REQUIRE(applied);
    log.reset();
    BOOST_REQUIRE(db->close().ok());
  }
  auto stats = w.json({"stats"});
  BOOST_REQUIRE_EQUAL(stats.size(), 1u);
  bool found = false;
  for (const auto& p : stats[0]["dafka_partitions"]) {
    if (p["subject"] != "t1" || p["partition"] != "P1") continue;
    found = true;
    BOOST_TEST(p["floor"] == 7);
    BOOST_TEST(p["head"] == 9);
    BOOST_TEST(p["records"] == 3);
    BOOST_TEST(p["bytes"] == 6);
  }
  BOOST_TEST(found);
  DumpRun dafka = w.dump({"dafka", "--topic", "t1", "--partition", "P1"});
  BOOST_REQUIRE_EQUAL(dafka.exit_code, 0);
  BOOST_TEST(dafka.out.find("subject t1  partition P1  head 9  floor 7\n     7  c7\n") != std::string::npos, dafka.out);
  DumpRun text = w.dump({"stats"});
  BOOST_TEST(text.out.find("floor") != std::string::npos, text.out);
}
