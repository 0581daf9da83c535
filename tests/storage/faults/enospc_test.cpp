// A real full disk: the database on a small tmpfs (needs root and mount;
// skipped otherwise). CHP writes fill it until RocksDB reports ENOSPC;
// nothing refused is applied or published, reads and snapshots keep
// working, and writes resume once space is freed (a filler file is removed).
// Once through the store, once through the CHP server with a loopback client.
#include <sys/mount.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "server/chp/chp_server.h"
#include "storage/chp/chp_store.h"
#include "storage/db/database.h"
#include "tests/support/chp_peer.h"
#include "tests/support/test_support.h"

using namespace std::chrono_literals;
using namespace zstore::storage;
using zstore::testing::TempDir;
using zstore::testing::wait_until;

namespace {

std::string failure(const Status& s) { return s.ok() ? std::string() : s.message(); }

// A tmpfs of size bytes mounted on a fresh directory; mounted() false when
// not permitted here.
class SmallFs {
 public:
  explicit SmallFs(std::size_t bytes) {
    std::string options = "size=" + std::to_string(bytes);
    mounted_ = ::mount("tmpfs", dir_.str().c_str(), "tmpfs", 0, options.c_str()) == 0;
  }
  ~SmallFs() {
    if (mounted_) ::umount2(dir_.str().c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  std::filesystem::path path() const { return dir_.path(); }

 private:
  TempDir dir_;
  bool mounted_ = false;
};

void write_filler(const std::filesystem::path& file, std::size_t bytes) {
  std::ofstream out(file, std::ios::binary);
  std::string chunk(64 << 10, 'f');
  for (std::size_t n = 0; n < bytes; n += chunk.size())
    out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
}

// A CHP store on an 8 MiB tmpfs that holds 2 MiB of filler (removing it
// frees the space).
struct FullDiskStore {
  SmallFs fs{8 << 20};
  std::filesystem::path filler = fs.path() / "filler";
  std::string dir = (fs.path() / "data").string();
  DatabaseOptions options;
  std::unique_ptr<Database> db;
  std::unique_ptr<ChpStore> chp;

  // Opens the store; false (the test is skipped) when no tmpfs can be mounted.
  bool open(SyncPolicy sync) {
    if (!fs.mounted()) {
      BOOST_TEST_MESSAGE("skipped: cannot mount a tmpfs here (needs root)");
      return false;
    }
    write_filler(filler, 2 << 20);
    options.sync = sync;
    options.resume_interval = 10ms;
    BOOST_REQUIRE(Database::Open(dir, options, &db).ok());
    BOOST_REQUIRE(ChpStore::Open(db.get(), &chp).ok());
    return true;
  }

  // Closes and opens the database again (what a restart would read).
  void reopen() {
    chp.reset();
    BOOST_REQUIRE(db->close().ok());
    db.reset();
    BOOST_REQUIRE(Database::Open(dir, options, &db).ok());
    BOOST_REQUIRE(ChpStore::Open(db.get(), &chp).ok());
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(full_disk_refuses_then_resumes) {
  FullDiskStore disk;
  if (!disk.open(SyncPolicy::kAlways)) return;
  auto& chp = disk.chp;

  std::string value(4096, 'v');
  Status refused = Status::Ok();
  std::uint64_t applied = 0;
  for (int i = 0; i < 100000 && refused.ok(); ++i) {
    std::vector<ChpWrite> w{{"key" + std::to_string(i), "u", "", value, 0, 0}};
    refused = chp->apply(w);
    if (refused.ok()) ++applied;
  }
  BOOST_REQUIRE_MESSAGE(!refused.ok(), "the disk never filled");
  BOOST_TEST_MESSAGE("full after " << applied << " writes: " << failure(refused));
  BOOST_CHECK_MESSAGE(refused.IsNoSpace(), refused.ToString());  // a real ENOSPC, by its code
  BOOST_CHECK_EQUAL(chp->last_sequence(), applied);
  ChpEntry entry;
  bool found = false;
  BOOST_CHECK(chp->get("key0", &entry, &found).ok() && found);
  BOOST_CHECK(chp->get("key" + std::to_string(applied), &entry, &found).ok() && !found);

  // Writes stay refused while the disk is full (recovery attempts fail).
  BOOST_CHECK(!wait_until(
      [&] {
        std::vector<ChpWrite> w{{"during", "u", "", value, 0, 0}};
        return chp->apply(w).ok();
      },
      300ms));
  BOOST_CHECK_EQUAL(chp->last_sequence(), applied);

  std::filesystem::remove(disk.filler);
  std::string last;
  bool resumed = wait_until(
      [&] {
        std::vector<ChpWrite> w{{"after", "u", "", "x", 0, 0}};
        Status s = chp->apply(w);
        last = failure(s);
        return s.ok();
      },
      10s);
  if (!resumed) {
    std::ifstream log(std::filesystem::path(disk.dir) / "LOG");
    std::string line;
    while (std::getline(log, line)) {
      if (line.find("rror") != std::string::npos || line.find("esum") != std::string::npos) BOOST_TEST_MESSAGE(line);
    }
  }
  BOOST_CHECK_MESSAGE(resumed, "writes did not resume after space was freed: "
                                   << last << (disk.db->write_unrecoverable() ? " (unrecoverable)" : ""));
  if (!resumed) return;
  BOOST_CHECK_EQUAL(chp->last_sequence(), applied + 1);
  disk.reopen();
  BOOST_CHECK_EQUAL(chp->last_sequence(), applied + 1);
  BOOST_CHECK(chp->get("after", &entry, &found).ok() && found);
  BOOST_CHECK_EQUAL(entry.sequence, applied + 1);
}

BOOST_AUTO_TEST_CASE(chp_server_on_full_disk_publishes_only_what_is_persisted) {
  FullDiskStore disk;
  if (!disk.open(DatabaseOptions{}.sync)) return;
  auto& chp = disk.chp;
  zmq::context_t ctx;
  zstore::server::ChpMetrics metrics;
  zstore::server::ChpServerConfig config;
  config.port = zstore::testing::free_port_range(3);
  config.hugz_interval = 100ms;
  auto server = std::make_unique<zstore::server::ChpServer>(ctx, *chp, config, metrics);
  server->start();
  zstore::testing::ChpPeer peer(ctx, "tcp://127.0.0.1", config.port);
  BOOST_REQUIRE(peer.wait_connected());

  std::map<std::string, std::uint64_t> published;  // key -> sequence seen in its KVPUB
  std::string value(4096, 'v');
  int i = 0;
  for (; i < 20000 && metrics.write_failures == 0; ++i) {
    std::string key = "key" + std::to_string(i);
    peer.set(key, value);
    if (auto kv = peer.wait_kvpub(key, 2s)) published[key] = kv->sequence;
  }
  BOOST_REQUIRE_MESSAGE(metrics.write_failures > 0, "the disk never filled");
  BOOST_TEST_MESSAGE("full after " << published.size() << " published updates");
  std::string refused = "key" + std::to_string(i - 1);
  BOOST_CHECK(!published.contains(refused));

  auto snap = peer.snapshot();
  BOOST_REQUIRE(snap);
  for (const auto& [key, seq] : published) {
    auto it = snap->entries.find(key);
    BOOST_REQUIRE_MESSAGE(it != snap->entries.end(), key << " was published but is not in the snapshot");
    BOOST_CHECK_EQUAL(it->second.sequence, seq);
  }
  BOOST_CHECK(!snap->entries.contains(refused));
  std::uint64_t last = metrics.last_sequence;
  BOOST_CHECK_EQUAL(snap->sequence, last);

  std::filesystem::remove(disk.filler);
  std::optional<zstore::protocol::chp::KvMsg> after;
  BOOST_REQUIRE(wait_until(
      [&] {
        peer.set("after", "x");
        after = peer.wait_kvpub("after", 200ms);
        return after.has_value();
      },
      10s));
  BOOST_CHECK_EQUAL(after->sequence, last + 1);
  server->stop();
  disk.reopen();
  BOOST_CHECK_EQUAL(chp->last_sequence(), last + 1);
  for (const auto& [key, seq] : published) {
    ChpEntry entry;
    bool found = false;
    BOOST_CHECK(chp->get(key, &entry, &found).ok() && found && entry.sequence == seq);
  }
}
