// Power loss through the PowerCut Env (storage/faults/power_cut_fs.h): under the
// default sync policy nothing a store confirmed is lost, a database cut at
// any point opens again, and a restart after a cut never hands out a
// sequence it could have published before.
#include "storage/faults/power_cut_fs.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <boost/test/unit_test.hpp>
#include <memory>
#include <string>
#include <vector>

#include "storage/chp/chp_store.h"
#include "storage/dafka/dafka_log.h"
#include "storage/db/database.h"
#include "storage/dafka/node_address.h"
#include "tests/support/test_support.h"

using namespace zstore::storage;
using zstore::testing::TempDir;

namespace {

constexpr std::uint64_t kNowMs = 1'800'000'000'000;  // the clock of the first start (2027)

std::string failure(const Status& s) { return s.ok() ? std::string() : s.message(); }

// One start of a server on dir: the database (through cut's Env when given)
// with both stores.
struct Node {
  std::unique_ptr<Database> db;
  std::unique_ptr<ChpStore> chp;
  std::unique_ptr<DafkaLog> dafka;

  Node(const std::string& dir, SyncPolicy sync, PowerCut* cut) {
    DatabaseOptions options;
    options.sync = sync;
    if (cut != nullptr) options.env = cut->env();
    Status s = Database::Open(dir, options, &db);
    BOOST_REQUIRE_MESSAGE(s.ok(), failure(s));
    BOOST_REQUIRE(ChpStore::Open(db.get(), &chp).ok());
    BOOST_REQUIRE(DafkaLog::Open(db.get(), &dafka).ok());
  }

  // A crashed machine's process: nothing more is written.
  void abandon() {
    dafka.reset();
    chp.reset();
    (void)db->close();  // fails: the power is off
    db.reset();
  }

  bool has(const std::string& key) {
    ChpEntry entry;
    bool found = false;
    BOOST_REQUIRE(chp->get(key, &entry, &found).ok());
    return found;
  }
};

std::string key_of(int i) { return "key" + std::to_string(i); }

// Applies n one-key batches, each confirmed when apply() returns (a server
// publishes it then); returns the last sequence confirmed.
std::uint64_t confirm_writes(Node& node, int n) {
  for (int i = 0; i < n; ++i) {
    std::vector<ChpWrite> w{{key_of(i), "uuid", "", std::string(100, 'v'), 0, 0}};
    BOOST_REQUIRE(node.chp->apply(w).ok());
  }
  return node.chp->last_sequence();
}

}  // namespace

BOOST_AUTO_TEST_CASE(default_policy_keeps_every_confirmed_update_and_record) {
  TempDir dir;
  auto cut = make_power_cut();
  Node node(dir.str(), DatabaseOptions{}.sync, cut.get());
  bool began = false;
  BOOST_REQUIRE(node.chp->start_standalone(node.db->stopped_cleanly(), kNowMs, 1, &began).ok());
  std::uint64_t confirmed = confirm_writes(node, 300);
  std::vector<DafkaRecord> records;
  for (std::uint64_t i = 0; i < 200; ++i) records.push_back({"topic", "producer", i, std::string(300, 'r')});
  std::vector<DafkaAppend> appended;
  BOOST_REQUIRE(node.dafka->append(records, &appended).ok());  // ACKed from here on
  cut->cut();
  node.abandon();

  Node after(dir.str(), SyncPolicy::kAlways, nullptr);
  BOOST_CHECK(!after.db->stopped_cleanly());
  for (int i = 0; i < 300; ++i) BOOST_CHECK_MESSAGE(after.has(key_of(i)), key_of(i) << " was lost");
  BOOST_CHECK_GE(after.chp->last_sequence(), confirmed);
  BOOST_CHECK_EQUAL(after.dafka->head("topic", "producer").value_or(0), 199u);
}

// The layout version, the node address and the epochs of a new database
// are synced when written, whatever the policy: a cut right after the first
// start leaves a directory that opens as the same zstore database.
BOOST_AUTO_TEST_CASE(a_new_database_cut_at_once_opens_with_its_identity) {
  for (SyncPolicy sync : {SyncPolicy::kNone, SyncPolicy::kBatch, SyncPolicy::kAlways}) {
    TempDir dir;
    auto cut = make_power_cut();
    Node node(dir.str(), sync, cut.get());
    std::string address;
    BOOST_REQUIRE(load_or_store_node_address(node.db.get(), "0123456789abcdef0123456789abcdef", &address).ok());
    bool began = false;
    BOOST_REQUIRE(node.chp->start_standalone(node.db->stopped_cleanly(), kNowMs, 1, &began).ok());
    BOOST_REQUIRE(began);
    ChpEpochs epochs = node.chp->epochs();
    cut->cut();
    node.abandon();

    DatabaseOptions options;
    options.sync = sync;
    std::unique_ptr<Database> db;
    Status s = Database::Open(dir.str(), options, &db);
    BOOST_REQUIRE_MESSAGE(s.ok(), "policy " << to_string(sync) << ": " << failure(s));
    std::string again;
    BOOST_REQUIRE(load_or_store_node_address(db.get(), "ffffffffffffffffffffffffffffffff", &again).ok());
    BOOST_CHECK_EQUAL(again, address);
    std::unique_ptr<ChpStore> chp;
    BOOST_REQUIRE(ChpStore::Open(db.get(), &chp).ok());
    BOOST_CHECK(chp->epochs() == epochs);
  }
}

// Under --sync none a cut loses the updates of the log's unsynced tail, the
// sequences among them included. The next start begins a new epoch above
// every sequence the store had confirmed, so none is confirmed twice.
BOOST_AUTO_TEST_CASE(after_a_cut_no_sequence_is_handed_out_twice) {
  TempDir dir;
  auto cut = make_power_cut();
  Node node(dir.str(), SyncPolicy::kNone, cut.get());
  bool began = false;
  BOOST_REQUIRE(node.chp->start_standalone(node.db->stopped_cleanly(), kNowMs, 1, &began).ok());
  std::uint64_t confirmed = confirm_writes(node, 300);
  cut->cut();
  BOOST_TEST_MESSAGE("dropped " << cut->dropped_bytes() << " bytes");
  BOOST_CHECK_GT(cut->dropped_bytes(), 0u);  // the log's tail (else this tests nothing)
  node.abandon();

  Node after(dir.str(), SyncPolicy::kNone, nullptr);
  BOOST_CHECK_LT(after.chp->last_sequence(), confirmed);  // the tail was lost
  BOOST_REQUIRE(!after.db->stopped_cleanly());
  BOOST_REQUIRE(after.chp->start_standalone(after.db->stopped_cleanly(), kNowMs + 1000, 2, &began).ok());
  BOOST_CHECK(began);
  std::vector<ChpWrite> w{{"next", "uuid", "", "v", 0, 0}};
  BOOST_REQUIRE(after.chp->apply(w).ok());
  BOOST_CHECK_GT(w[0].sequence, confirmed);
}

// A clean stop is not a cut: the map goes on from its last sequence.
BOOST_AUTO_TEST_CASE(a_clean_stop_keeps_the_epoch) {
  TempDir dir;
  std::uint64_t confirmed = 0;
  {
    Node node(dir.str(), SyncPolicy::kNone, nullptr);
    bool began = false;
    BOOST_REQUIRE(node.chp->start_standalone(node.db->stopped_cleanly(), kNowMs, 1, &began).ok());
    confirmed = confirm_writes(node, 10);
    node.chp.reset();
    node.dafka.reset();
    BOOST_REQUIRE(node.db->close().ok());
  }
  Node after(dir.str(), SyncPolicy::kNone, nullptr);
  BOOST_CHECK(after.db->stopped_cleanly());
  bool began = true;
  BOOST_REQUIRE(after.chp->start_standalone(after.db->stopped_cleanly(), kNowMs + 1000, 2, &began).ok());
  BOOST_CHECK(!began);
  std::vector<ChpWrite> w{{"next", "uuid", "", "v", 0, 0}};
  BOOST_REQUIRE(after.chp->apply(w).ok());
  BOOST_CHECK_EQUAL(w[0].sequence, confirmed + 1);
}

// The Env itself: appended bytes are on the disk only once synced.
BOOST_AUTO_TEST_CASE(unsynced_bytes_are_dropped_synced_ones_kept) {
  TempDir dir;
  auto cut = make_power_cut();
  std::unique_ptr<Database> db;
  DatabaseOptions options;
  options.sync = SyncPolicy::kNone;
  options.env = cut->env();
  BOOST_REQUIRE(Database::Open(dir.str(), options, &db).ok());
  std::uint64_t synced = cut->synced_bytes();
  BOOST_CHECK_GT(synced, 0u);  // the layout version and the open mark
  rocksdb::WriteBatch batch;
  batch.Put(db->handle(Column::kChpMap), "unsynced", std::string(1000, 'u'));
  BOOST_REQUIRE(db->write(batch).ok());
  BOOST_CHECK_EQUAL(cut->synced_bytes(), synced);
  cut->cut();
  BOOST_CHECK_GE(cut->dropped_bytes(), 1000u);
  rocksdb::WriteBatch more;
  more.Put(db->handle(Column::kChpMap), "after", "x");
  BOOST_CHECK(!db->write(more).ok());  // the power is off
  (void)db->close();
  db.reset();
  options.env = nullptr;
  BOOST_REQUIRE(Database::Open(dir.str(), options, &db).ok());
  std::string value;
  BOOST_CHECK(db->db()->Get(rocksdb::ReadOptions(), db->handle(Column::kChpMap), "unsynced", &value).IsNotFound());
}
