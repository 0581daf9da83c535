// zstore-dump on data written by the real zstored: CHP keys published
// through the collector and Dafka records ACKed to the client library, then
// zstored SIGKILLed (the writes are still only in the WAL): every published
// key and every ACKed record is in the dump with its exact bytes, and the
// dir is unchanged. Also a dump while zstored runs (holding the DB lock).
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "client/dafka_producer.h"
#include "tests/dump/dump_runner.h"
#include "tests/support/chp_peer.h"
#include "tests/support/test_support.h"
#include "tests/support/zstored.h"
#include "tools/dump/bytes_format.h"

namespace dafka = zstore::client::dafka;
using zstore::testing::ChpPeer;
using zstore::testing::DumpRun;
using zstore::testing::field_bytes;
using zstore::testing::fingerprint;
using zstore::testing::json_lines;
using zstore::testing::run_dump;
using zstore::testing::Zstored;
using namespace std::chrono_literals;

namespace {

const std::string kBinary("\x00\xff\xfe binary \x80", 12);

// zstored with its tower at T and its store publisher at T+2.
struct Store {
  std::uint16_t tower_port = zstore::testing::free_port_range(3);
  Zstored zstored{{"--tower-port", std::to_string(tower_port), "--dafka-port", std::to_string(tower_port + 2),
                   "--beacon-interval-ms", "100"}};
  zmq::context_t ctx;
  Store() { BOOST_REQUIRE_MESSAGE(zstored.start(), "zstored did not start: " + zstored.log()); }
  std::string tower() const { return "tcp://127.0.0.1:" + std::to_string(tower_port); }
  std::unique_ptr<ChpPeer> peer() {
    auto p = std::make_unique<ChpPeer>(ctx, "tcp://127.0.0.1", zstored.chp_port());
    BOOST_REQUIRE(p->wait_connected());
    return p;
  }
};

struct Published {
  std::uint64_t sequence;
  std::string uuid;
  std::string properties;
  std::string value;
};

// Sets key and waits for its KVPUB: published means stored.
void publish(ChpPeer& peer, std::map<std::string, Published>* out, const std::string& key, const std::string& value,
             const std::string& properties = "") {
  std::string uuid = peer.set(key, value, properties);
  auto pub = peer.wait_kvpub(key, 10s);
  BOOST_REQUIRE_MESSAGE(pub.has_value(), "no KVPUB for " + key);
  (*out)[key] = {pub->sequence, uuid, properties, value};
}

std::map<std::string, nlohmann::json> by_key(const std::vector<nlohmann::json>& lines) {
  std::map<std::string, nlohmann::json> out;
  for (const auto& j : lines) out[field_bytes(j, "key")] = j;
  return out;
}

DumpRun dump(const Zstored& z, std::vector<std::string> args) {
  args.insert(args.begin(), {"--data-dir", z.data_dir(), "--format", "json"});
  return run_dump(args);
}

}  // namespace

BOOST_AUTO_TEST_CASE(killed_server_dir_shows_every_published_key_and_acked_record) {
  Store store;
  std::map<std::string, Published> keys;
  const auto now_ms = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
  {
    auto peer = store.peer();
    publish(*peer, &keys, "/e2e/plain", "hello");
    publish(*peer, &keys, "/e2e/binary", kBinary);
    publish(*peer, &keys, "/e2e/ttl", "temporary", "ttl=3600\n");
    publish(*peer, &keys, "/e2e/props", "v", "colour=blue\nsize=2\n");
    publish(*peer, &keys, std::string("/e2e/key\xff", 9), "binary key");
    for (int i = 0; i < 100; ++i) publish(*peer, &keys, "/bulk/" + std::to_string(i), "value " + std::to_string(i));
  }
  std::vector<std::string> contents;
  std::string partition;
  {
    dafka::ProducerOptions o;
    o.node.towers = {store.tower()};
    o.node.beacon_interval = 100ms;
    o.head_interval = 200ms;
    dafka::Producer producer(o);
    for (int i = 0; i < 30; ++i)
      contents.push_back(i % 10 == 3 ? kBinary + std::to_string(i) : "r" + std::to_string(i));
    for (const auto& c : contents) producer.publish("dump-e2e", c);
    BOOST_REQUIRE(producer.flush(15s));  // every record ACKed by zstored
    partition = producer.address();
  }
  store.zstored.kill(SIGKILL);
  BOOST_REQUIRE(store.zstored.wait_exit() == 128 + SIGKILL);
  auto before = fingerprint(store.zstored.data_dir());

  DumpRun chp = dump(store.zstored, {"chp"});
  BOOST_REQUIRE_MESSAGE(chp.exit_code == 0, chp.err);
  auto dumped = by_key(json_lines(chp.out));
  for (const auto& [key, p] : keys) {
    BOOST_TEST_CONTEXT(zstore::dump::text(key)) {
      BOOST_REQUIRE(dumped.contains(key));
      const auto& j = dumped[key];
      BOOST_TEST(field_bytes(j, "value") == p.value);
      BOOST_TEST(field_bytes(j, "props") == p.properties);
      BOOST_TEST(j["seq"] == p.sequence);
      BOOST_TEST(j["uuid"] == zstore::dump::hex(p.uuid));
      if (key != "/e2e/ttl") BOOST_TEST(j["expires_at"].is_null());
    }
  }
  BOOST_TEST(dumped["/e2e/binary"]["value_encoding"] == "base64");
  const auto expires = dumped["/e2e/ttl"]["expires_at"].get<std::uint64_t>();
  BOOST_TEST(expires >= now_ms + 3600 * 1000);
  BOOST_TEST(expires <= now_ms + 3600 * 1000 + 60 * 1000);

  DumpRun records = dump(store.zstored, {"dafka", "--topic", "dump-e2e"});
  BOOST_REQUIRE_MESSAGE(records.exit_code == 0, records.err);
  auto lines = json_lines(records.out);
  BOOST_REQUIRE_EQUAL(lines.size(), contents.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    BOOST_TEST(lines[i]["offset"] == i);
    BOOST_TEST(lines[i]["subject"] == "dump-e2e");
    BOOST_TEST(lines[i]["partition"] == partition);
    BOOST_TEST(field_bytes(lines[i], "content") == contents[i]);
  }

  DumpRun stats = dump(store.zstored, {"stats"});
  BOOST_REQUIRE_MESSAGE(stats.exit_code == 0, stats.err);
  auto s = json_lines(stats.out).at(0);
  BOOST_TEST(s["chp_last_sequence"].get<std::uint64_t>() >= keys.at("/bulk/99").sequence);
  BOOST_TEST(s["node_address"].get<std::string>().size() == 32u);
  bool head_found = false;
  for (const auto& p : s["dafka_partitions"]) {
    if (p["subject"] == "dump-e2e" && p["partition"] == partition) head_found = p["head"] == contents.size() - 1;
  }
  BOOST_TEST(head_found);
  for (const auto& c : s["columns"]) {
    if (c["name"] == "chp_map" || c["name"] == "dafka_records") {
      BOOST_TEST(c["sst_bytes"] == 0, "the writes must still be only in the WAL: " + c.dump());
    }
  }

  BOOST_TEST((fingerprint(store.zstored.data_dir()) == before));  // read-only: nothing written, nothing added

  // A copy of the crashed dir (what an operator would take) dumps the same.
  zstore::testing::TempDir copy;
  std::filesystem::copy(store.zstored.data_dir(), copy.path(), std::filesystem::copy_options::recursive);
  DumpRun from_copy = run_dump({"--data-dir", copy.str(), "--format", "json", "chp"});
  BOOST_TEST(from_copy.exit_code == 0, from_copy.err);
  BOOST_TEST(from_copy.out == chp.out);
}

BOOST_AUTO_TEST_CASE(dump_while_zstored_runs_on_the_dir) {
  Store store;
  std::map<std::string, Published> keys;
  auto peer = store.peer();
  for (int i = 0; i < 20; ++i) publish(*peer, &keys, "/live/" + std::to_string(i), "v" + std::to_string(i));

  DumpRun chp = dump(store.zstored, {"chp", "--prefix", "/live/"});
  BOOST_REQUIRE_MESSAGE(chp.exit_code == 0, chp.err);
  auto dumped = by_key(json_lines(chp.out));
  BOOST_TEST(dumped.size() == keys.size());
  for (const auto& [key, p] : keys) BOOST_TEST(dumped[key]["value"] == p.value);
  DumpRun stats = dump(store.zstored, {"stats"});
  BOOST_TEST(stats.exit_code == 0, stats.err);

  // The server was not disturbed: it still stores and publishes.
  publish(*peer, &keys, "/live/after", "still writing");
  BOOST_TEST(store.zstored.process()->running());
  DumpRun again = dump(store.zstored, {"chp", "--prefix", "/live/after"});
  BOOST_REQUIRE_EQUAL(json_lines(again.out).size(), 1u);
}
