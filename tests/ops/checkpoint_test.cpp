// Online backup: `zstore-cli admin checkpoint` makes a running zstored
// (CHP + Dafka store) write a checkpoint; a zstored started on it serves
// the same CHP keys and last sequence, and every column family (Dafka
// records and heads included) equals the original's. An existing target is
// refused.
#include <boost/test/unit_test.hpp>

#include <csignal>

#include "client/dafka_producer.h"
#include "storage/dafka/dafka_log.h"
#include "tests/ops/ops_support.h"
#include "tests/support/chp_peer.h"

using namespace zstore::testing;
using namespace std::chrono_literals;
namespace dafka = zstore::client::dafka;

namespace {

std::string admin(std::uint16_t http_port, const std::vector<std::string>& words, int* rc) {
  std::vector<std::string> argv = {bin_path("zstore-cli"), "admin", "--server",
                                   "http://127.0.0.1:" + std::to_string(http_port)};
  argv.insert(argv.end(), words.begin(), words.end());
  std::string out;
  *rc = run_command(argv, &out);
  return out;
}

void publish_records(std::uint16_t tower_port, int count) {
  dafka::ProducerOptions o;
  o.node.towers = {"tcp://127.0.0.1:" + std::to_string(tower_port)};
  o.node.beacon_interval = 100ms;
  o.head_interval = 200ms;
  dafka::Producer producer(o);
  BOOST_REQUIRE(producer.wait_connected(15s));
  for (int i = 0; i < count; ++i) producer.publish(i % 2 ? "odd" : "even", "record " + std::to_string(i));
  BOOST_REQUIRE(producer.flush(15s));
}

// Every Dafka record of the database in dir, read back through DafkaLog
// (an entry of dafka_records may hold a run of records).
std::size_t dafka_records_in(const std::string& dir) {
  zstore::storage::DatabaseOptions options;
  options.read_only = true;
  std::unique_ptr<zstore::storage::Database> db;
  BOOST_REQUIRE(zstore::storage::Database::Open(dir, options, &db).ok());
  std::unique_ptr<zstore::storage::DafkaLog> log;
  BOOST_REQUIRE(zstore::storage::DafkaLog::Open(db.get(), &log).ok());
  std::size_t n = 0;
  for (const auto& p : log->partitions_after(nullptr, 1000)) {
    auto cursor = log->read(p.subject, p.partition, 0, p.next);
    zstore::storage::DafkaRecord r;
    while (cursor->next(&r)) ++n;
    BOOST_REQUIRE(cursor->status().ok());
  }
  return n;
}

}  // namespace

BOOST_AUTO_TEST_CASE(checkpoint_of_a_running_server_restores_the_same_state) {
  std::uint16_t tower = free_port_range(3);
  TempDir backups;
  HttpZstored z({"--tower-port", std::to_string(tower), "--dafka-port", std::to_string(tower + 2),
                 "--beacon-interval-ms", "100", "--backup-dir", backups.str()});
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  zmq::context_t ctx;
  ChpPeer peer(ctx, "tcp://127.0.0.1", z.server.chp_port());
  BOOST_REQUIRE(peer.wait_connected());
  for (int i = 0; i < 25; ++i) peer.set("backup/" + std::to_string(i), std::string(i * 10 + 1, 'v'));
  BOOST_REQUIRE(peer.wait_kvpub("backup/24", 10s));
  peer.set("backup/3", "");  // a delete
  BOOST_REQUIRE(peer.wait_kvpub("backup/3", 10s));
  publish_records(tower, 40);
  auto original = peer.snapshot();
  BOOST_REQUIRE(original);
  auto before = z.metrics();
  BOOST_TEST(metric(before, "zstore_dafka_records_stored_total") == 40.0);
  BOOST_TEST(metric(before, "zstore_dafka_partitions") == 2.0);

  std::string target = (backups.path() / "cp1").string();
  int rc = -1;
  std::string out = admin(z.http_port, {"checkpoint", "cp1"}, &rc);
  BOOST_REQUIRE_MESSAGE(rc == 0, out);
  BOOST_TEST(out.find(target) != std::string::npos, out);
  out = admin(z.http_port, {"checkpoint", "cp1"}, &rc);
  BOOST_TEST(rc == 1);
  BOOST_TEST(out.find("already exists") != std::string::npos, out);
  out = admin(z.http_port, {"checkpoint", "no/cp"}, &rc);
  BOOST_TEST(rc == 1);
  BOOST_TEST(out.find("does not exist") != std::string::npos, out);

  z.server.kill(SIGTERM);
  BOOST_REQUIRE_EQUAL(z.server.wait_exit(), 0);
  auto original_columns = dump_columns(z.server.data_dir());
  auto restored_columns = dump_columns(target);
  BOOST_TEST(dafka_records_in(z.server.data_dir()) == 40u);
  BOOST_TEST(dafka_records_in(target) == 40u);
  // The stopped server marked its clean stop; the checkpoint of a running
  // one holds the open mark, so a restore is not taken for a clean stop.
  auto& original_meta = original_columns.at("meta");
  auto& restored_meta = restored_columns.at("meta");
  BOOST_TEST(original_meta["clean_stop"] == "1");
  BOOST_TEST(restored_meta["clean_stop"] == "0");
  original_meta.erase("clean_stop");
  restored_meta.erase("clean_stop");
  for (const auto& [name, rows] : original_columns) BOOST_TEST((rows == restored_columns.at(name)), name);

  // A server started on the checkpoint serves the same map, in a new epoch
  // above every sequence the original could have published after the
  // checkpoint (none is handed out twice).
  std::uint16_t chp = free_port_range(3), http = free_port(), dafka_port = free_port();
  TempDir logs;
  Process restored(bin_path("zstored"),
                   {"--data-dir", target, "--bind", "127.0.0.1", "--chp-port", std::to_string(chp), "--tower-port", "0",
                    "--dafka-port", std::to_string(dafka_port), "--http-port", std::to_string(http)},
                   logs.path() / "restored.log");
  BOOST_REQUIRE_MESSAGE(wait_until([&] { return restored.log().find("zstored started") != std::string::npos; }, 20s),
                        restored.log());
  ChpPeer again(ctx, "tcp://127.0.0.1", chp);
  auto copy = again.snapshot();
  BOOST_REQUIRE(copy);
  BOOST_TEST(copy->sequence > original->sequence);
  BOOST_TEST(restored.log().find("the last stop was not clean") != std::string::npos, restored.log());
  BOOST_TEST((copy->entries == original->entries));
  std::size_t backup_keys = 0;
  for (const auto& [key, msg] : copy->entries) backup_keys += key.rfind("backup/", 0) == 0;
  BOOST_TEST(backup_keys == 24u);  // 25 set, 1 deleted
  BOOST_TEST(copy->entries.count("backup/3") == 0u);
  auto m = scrape_metrics(http);
  BOOST_TEST(metric(m, "zstore_chp_last_sequence") > metric(before, "zstore_chp_last_sequence"));
  BOOST_TEST(metric(m, "zstore_chp_keys") == metric(before, "zstore_chp_keys"));
  BOOST_TEST(metric(m, "zstore_dafka_partitions") == 2.0);
  restored.kill(SIGTERM);
  BOOST_TEST(restored.wait() == 0);
}
