// The real zstored refuses to start on a damaged data dir: non-zero exit, a
// message naming the problem, and the directory left as it was (never
// replaced by a new, empty database). The RocksDB info log (LOG*) is the
// only thing an attempt may touch.
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "storage/chp/chp_store.h"
#include "storage/dafka/dafka_log.h"
#include "storage/db/database.h"
#include "tests/support/test_support.h"

#include <rocksdb/db.h>

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace zstore::storage;
using zstore::testing::Credentials;
using zstore::testing::Process;
using zstore::testing::TempDir;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// A data dir with CHP keys flushed to table files and more in the log.
void populate(const std::string& dir) {
  std::unique_ptr<Database> db;
  BOOST_REQUIRE(Database::Open(dir, {}, &db).ok());
  std::unique_ptr<ChpStore> chp;
  BOOST_REQUIRE(ChpStore::Open(db.get(), &chp).ok());
  for (int i = 0; i < 100; ++i) {
    std::vector<ChpWrite> w{{"key" + std::to_string(i), "u", "", std::string(100, 'v'), 0, 0}};
    BOOST_REQUIRE(chp->apply(w).ok());
  }
  std::vector<rocksdb::ColumnFamilyHandle*> all;
  for (Column c : {Column::kMeta, Column::kChpMap}) all.push_back(db->handle(c));
  BOOST_REQUIRE(db->db()->Flush(rocksdb::FlushOptions(), all).ok());
  std::vector<ChpWrite> w{{"in-log", "u", "", "v", 0, 0}};
  BOOST_REQUIRE(chp->apply(w).ok());
  chp.reset();
  BOOST_REQUIRE(db->close().ok());
}

// Adds Dafka records large enough for a blob file, flushed (dir populated).
void add_blob_records(const std::string& dir) {
  std::unique_ptr<Database> db;
  BOOST_REQUIRE(Database::Open(dir, {}, &db).ok());
  std::unique_ptr<DafkaLog> log;
  BOOST_REQUIRE(DafkaLog::Open(db.get(), &log).ok());
  std::vector<DafkaRecord> records;
  for (std::uint64_t i = 0; i < 100; ++i) records.push_back({"topic", "producer", i, std::string(1000, 'r')});
  std::vector<DafkaAppend> appended;
  BOOST_REQUIRE(log->append(records, &appended).ok());
  BOOST_REQUIRE(db->db()->Flush(rocksdb::FlushOptions(), db->handle(Column::kDafkaRecords)).ok());
  log.reset();
  BOOST_REQUIRE(db->close().ok());
}

// Every file but the info logs, with its contents.
std::map<std::string, std::string> contents(const fs::path& dir) {
  std::map<std::string, std::string> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return {{"(not a directory)", read_file(dir)}};
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (!name.starts_with("LOG")) files[name] = read_file(e.path());
  }
  return files;
}

fs::path first_with(const fs::path& dir, const std::string& prefix, const std::string& suffix) {
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.starts_with(prefix) && name.ends_with(suffix)) return e.path();
  }
  BOOST_FAIL("no " + prefix + "*" + suffix + " in " + dir.string());
  return {};
}

std::vector<std::string> zstored_args(const fs::path& dir) {
  return {"--data-dir",   dir.string(),
          "--bind",       "127.0.0.1",
          "--chp-port",   std::to_string(zstore::testing::free_port_range(3)),
          "--dafka-port", "0",
          "--tower-port", "0"};
}

// What a refused start may change in the data dir.
enum class Leaves {
  kAll,        // nothing but the info logs
  kDataFiles,  // damage found after RocksDB's open, which has written its
               // bookkeeping (MANIFEST, OPTIONS, a new log) and may have
               // deleted a log whose updates all are in tables (RocksDB 9
               // does): every table and blob file that was there is still
               // there, unchanged; the test then undoes its damage and
               // checks every update is still there (expect_all_data)
};

bool data_file(const std::string& name) { return name.ends_with(".sst") || name.ends_with(".blob"); }

bool left_as_it_was(const std::map<std::string, std::string>& before, const std::map<std::string, std::string>& after,
                    Leaves leaves) {
  if (leaves == Leaves::kAll) return after == before;
  for (const auto& [name, bytes] : before) {
    if (!data_file(name)) continue;
    auto it = after.find(name);
    if (it == after.end() || it->second != bytes) return false;
  }
  return true;
}

// Opens dir and checks that everything populate() and add_blob_records()
// wrote reads back.
void expect_all_data(const fs::path& dir) {
  std::unique_ptr<Database> db;
  BOOST_REQUIRE(Database::Open(dir.string(), {}, &db).ok());
  std::unique_ptr<ChpStore> chp;
  BOOST_REQUIRE(ChpStore::Open(db.get(), &chp).ok());
  std::vector<std::string> keys{"in-log"};
  for (int i = 0; i < 100; ++i) keys.push_back("key" + std::to_string(i));
  for (const auto& key : keys) {
    ChpEntry entry;
    bool found = false;
    BOOST_REQUIRE(chp->get(key, &entry, &found).ok());
    BOOST_CHECK_MESSAGE(found, "key " << key << " is gone");
  }
  chp.reset();
  std::unique_ptr<DafkaLog> log;
  BOOST_REQUIRE(DafkaLog::Open(db.get(), &log).ok());
  auto cursor = log->read("topic", "producer", 0, 1000);
  DafkaRecord record;
  std::uint64_t next = 0;
  while (cursor->next(&record)) {
    BOOST_CHECK_EQUAL(record.offset, next);
    BOOST_CHECK_EQUAL(record.content, std::string(1000, 'r'));
    ++next;
  }
  BOOST_CHECK(cursor->status().ok());
  BOOST_CHECK_EQUAL(next, 100u);
  cursor.reset();
  log.reset();
  BOOST_REQUIRE(db->close().ok());
}

// Runs zstored on dir; expects a non-zero exit naming the problem (any of
// words, case-sensitive) and dir left as it was.
void expect_refused(const fs::path& dir, const std::vector<std::string>& words,
                    std::optional<Credentials> run_as = std::nullopt,
                    const std::string& binary = zstore::testing::bin_path("zstored"), Leaves leaves = Leaves::kAll) {
  auto before = contents(dir);
  TempDir logs;
  Process zstored(binary, zstored_args(dir), logs.path() / "zstored.log", run_as);
  int code = zstored.wait(15s);
  std::string log = zstored.log();
  BOOST_TEST_MESSAGE("exit " << code << ": " << log);
  BOOST_CHECK_MESSAGE(code != 0 && code != -1, "zstored exit code " << code << ", log: " << log);
  BOOST_CHECK(log.find("zstored started") == std::string::npos);
  bool named = false;
  for (const auto& w : words) named = named || log.find(w) != std::string::npos;
  BOOST_CHECK_MESSAGE(named, "the message names none of the expected words; log: " << log);
  BOOST_CHECK_MESSAGE(left_as_it_was(before, contents(dir), leaves), "the data dir was modified");
}

struct Populated {
  TempDir tmp;
  fs::path dir = tmp.path() / "data";
  Populated() { populate(dir.string()); }
};

// Runs zstored on dir; expects it to start and to exit 0 on SIGTERM.
void expect_starts(const fs::path& dir, std::optional<Credentials> run_as = std::nullopt,
                   const std::string& binary = zstore::testing::bin_path("zstored")) {
  TempDir logs;
  Process zstored(binary, zstored_args(dir), logs.path() / "zstored.log", run_as);
  BOOST_CHECK_MESSAGE(
      zstore::testing::wait_until([&] { return zstored.log().find("zstored started") != std::string::npos; }, 15s),
      "zstored did not start: " << zstored.log());
  zstored.kill(SIGTERM);
  BOOST_CHECK_EQUAL(zstored.wait(15s), 0);
}

// Root reads a mode-000 directory anyway: as root, zstored runs as nobody,
// the owner of p's directories. Otherwise it runs as ourselves.
std::optional<Credentials> unprivileged_owner_of(const Populated& p) {
  if (::geteuid() != 0) return std::nullopt;
  const passwd* nobody = ::getpwnam("nobody");
  BOOST_REQUIRE_MESSAGE(nobody != nullptr, "no user nobody to drop root privileges to");
  Credentials as{nobody->pw_uid, nobody->pw_gid};
  fs::permissions(p.tmp.path(), fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  BOOST_REQUIRE_EQUAL(::chown(p.dir.c_str(), as.uid, as.gid), 0);
  for (const auto& e : fs::recursive_directory_iterator(p.dir)) {
    BOOST_REQUIRE_EQUAL(::chown(e.path().c_str(), as.uid, as.gid), 0);
  }
  return as;
}

// zstored where the unprivileged user can run it: a copy in p's (traversable)
// temp dir, since the build tree may lie below a directory only root may
// enter (a CI clone in a `mktemp -d` directory, mode 0700).
std::string zstored_reachable_from(const Populated& p) {
  fs::path copy = p.tmp.path() / "zstored";
  fs::copy_file(zstore::testing::bin_path("zstored"), copy, fs::copy_options::overwrite_existing);
  fs::permissions(copy, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                            fs::perms::others_exec);
  return copy.string();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(zstored_refuses_damaged_data_dirs)

BOOST_AUTO_TEST_CASE(healthy_dir_starts) {
  // The control: the same dir undamaged starts (so the refusals below are
  // about the damage).
  Populated p;
  expect_starts(p.dir);
}

BOOST_AUTO_TEST_CASE(empty_current) {
  Populated p;
  write_file(p.dir / "CURRENT", "");
  expect_refused(p.dir, {"CURRENT"});
}

BOOST_AUTO_TEST_CASE(truncated_current) {
  Populated p;
  std::string current = read_file(p.dir / "CURRENT");
  write_file(p.dir / "CURRENT", current.substr(0, current.size() / 2));
  expect_refused(p.dir, {"CURRENT", "MANIFEST"});
}

BOOST_AUTO_TEST_CASE(garbage_current) {
  Populated p;
  write_file(p.dir / "CURRENT", std::string("\x01\xff garbage\n", 11));
  expect_refused(p.dir, {"CURRENT", "MANIFEST"});
}

BOOST_AUTO_TEST_CASE(garbage_manifest) {
  Populated p;
  fs::path manifest = first_with(p.dir, "MANIFEST-", "");
  std::string bytes = read_file(manifest);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 131 + 7) & 0xff);
  write_file(manifest, bytes);
  expect_refused(p.dir, {"damaged database"});
}

BOOST_AUTO_TEST_CASE(missing_table_file) {
  Populated p;
  fs::path sst = first_with(p.dir, "", ".sst");
  fs::remove(sst);
  expect_refused(p.dir, {sst.stem().string()});  // RocksDB names it by number (.sst or .ldb)
}

BOOST_AUTO_TEST_CASE(zero_length_table_file) {
  Populated p;
  fs::path sst = first_with(p.dir, "", ".sst");
  write_file(sst, "");
  expect_refused(p.dir, {sst.filename().string()});
}

BOOST_AUTO_TEST_CASE(healthy_dir_with_blob_files_starts) {
  Populated p;
  add_blob_records(p.dir.string());
  first_with(p.dir, "", ".blob");
  expect_starts(p.dir);
}

// RocksDB itself opens without looking at blob files; zstored checks them.
BOOST_AUTO_TEST_CASE(missing_blob_file) {
  Populated p;
  add_blob_records(p.dir.string());
  fs::path blob = first_with(p.dir, "", ".blob");
  std::string bytes = read_file(blob);
  fs::remove(blob);
  expect_refused(p.dir, {blob.filename().string()}, std::nullopt, zstore::testing::bin_path("zstored"),
                 Leaves::kDataFiles);
  write_file(blob, bytes);
  expect_all_data(p.dir);
}

BOOST_AUTO_TEST_CASE(truncated_blob_file) {
  Populated p;
  add_blob_records(p.dir.string());
  fs::path blob = first_with(p.dir, "", ".blob");
  std::string bytes = read_file(blob);
  fs::resize_file(blob, fs::file_size(blob) - 1);
  expect_refused(p.dir, {blob.filename().string()}, std::nullopt, zstore::testing::bin_path("zstored"),
                 Leaves::kDataFiles);
  write_file(blob, bytes);
  expect_all_data(p.dir);
}

BOOST_AUTO_TEST_CASE(data_dir_is_a_file) {
  TempDir tmp;
  fs::path file = tmp.path() / "data";
  write_file(file, "not a directory");
  expect_refused(file, {"not a directory", "Not a directory"});
}

BOOST_AUTO_TEST_CASE(unreadable_data_dir) {
  Populated p;
  auto run_as = unprivileged_owner_of(p);
  std::string binary = run_as ? zstored_reachable_from(p) : zstore::testing::bin_path("zstored");
  expect_starts(p.dir, run_as, binary);  // the control: the same user starts on the readable dir
  fs::permissions(p.dir, fs::perms::none);
  expect_refused(p.dir, {"Permission denied", "permission"}, run_as, binary);
  fs::permissions(p.dir, fs::perms::owner_all);
}

BOOST_AUTO_TEST_SUITE_END()
