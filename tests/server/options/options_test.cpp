// zstored flags added for bounded operation: values reach ServerOptions and
// bad values exit 2 with a message naming the flag.
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "server/options/options.h"
#include "tests/support/test_support.h"

using zstore::server::parse_options;
using zstore::server::ParseOutcome;

namespace {

ParseOutcome parse(std::vector<std::string> args) {
  args.insert(args.begin(), "zstored");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  const char* const none[] = {nullptr};
  return parse_options(static_cast<int>(argv.size()), argv.data(), none);
}

void expect_refused(std::vector<std::string> args, const std::string& flag) {
  auto out = parse(args);
  BOOST_TEST(!out.options.has_value());
  BOOST_TEST(out.exit_code == 2);
  BOOST_TEST(out.message.find(flag) != std::string::npos, out.message);
}

}  // namespace

BOOST_AUTO_TEST_CASE(dafka_fetch_retry_flags) {
  auto d = parse({});
  BOOST_REQUIRE(d.options);
  BOOST_TEST(d.options->dafka_fetch_retry_ms == 1000u);
  BOOST_TEST(d.options->dafka_fetch_retries == 10u);
  auto o = parse({"--dafka-fetch-retry-ms", "50", "--dafka-fetch-retries", "3"});
  BOOST_REQUIRE(o.options);
  BOOST_TEST(o.options->dafka_fetch_retry_ms == 50u);
  BOOST_TEST(o.options->dafka_fetch_retries == 3u);
  expect_refused({"--dafka-fetch-retry-ms", "0"}, "--dafka-fetch-retry-ms");
  expect_refused({"--dafka-fetch-retries", "0"}, "--dafka-fetch-retries");
  expect_refused({"--dafka-fetch-retries", "x"}, "dafka-fetch-retries");
}

BOOST_AUTO_TEST_CASE(dafka_max_message_bytes_flag) {
  auto d = parse({});
  BOOST_REQUIRE(d.options);
  BOOST_TEST(d.options->dafka_max_message_bytes == (1u << 20));
  auto o = parse({"--dafka-max-message-bytes", "65536"});
  BOOST_REQUIRE(o.options);
  BOOST_TEST(o.options->dafka_max_message_bytes == 65536u);
  expect_refused({"--dafka-max-message-bytes", "65535"}, "--dafka-max-message-bytes must be 65536..67108864");
  expect_refused({"--dafka-max-message-bytes", "67108865"}, "--dafka-max-message-bytes must be 65536..67108864");
}

BOOST_AUTO_TEST_CASE(min_free_bytes_flag) {
  auto d = parse({});
  BOOST_REQUIRE(d.options);
  BOOST_TEST(d.options->min_free_bytes == (1ull << 30));
  auto o = parse({"--min-free-bytes", "0"});
  BOOST_REQUIRE(o.options);
  BOOST_TEST(o.options->min_free_bytes == 0u);
  expect_refused({"--min-free-bytes", "lots"}, "min-free-bytes");
}

BOOST_AUTO_TEST_CASE(snapshot_stall_flag) {
  auto d = parse({});
  BOOST_REQUIRE(d.options);
  BOOST_TEST(d.options->snapshot_stall_ms == 30000u);
  auto o = parse({"--snapshot-stall-ms", "250"});
  BOOST_REQUIRE(o.options);
  BOOST_TEST(o.options->snapshot_stall_ms == 250u);
  expect_refused({"--snapshot-stall-ms", "soon"}, "snapshot-stall-ms");
  auto d2 = parse({"--max-batch-bytes", "1"});
  BOOST_REQUIRE(d2.options);
  BOOST_TEST(d2.options->max_batch_bytes == 1u);
  BOOST_TEST(d.options->max_batch_bytes == (64ull << 20));
  expect_refused({"--max-batch-bytes", "0"}, "--max-batch-bytes");
}

BOOST_AUTO_TEST_CASE(receive_buffer_bytes_flag) {
  auto d = parse({});
  BOOST_REQUIRE(d.options);
  BOOST_TEST(d.options->receive_buffer_bytes == (4ull << 30));
  auto o = parse({"--receive-buffer-bytes", "1048576"});
  BOOST_REQUIRE(o.options);
  BOOST_TEST(o.options->receive_buffer_bytes == 1048576u);
  expect_refused({"--receive-buffer-bytes", "0"}, "--receive-buffer-bytes");
}

BOOST_AUTO_TEST_CASE(rocksdb_memory_flags) {
  auto d = parse({});
  BOOST_REQUIRE(d.options);
  BOOST_TEST(d.options->memtable_budget_bytes == (256ull << 20));
  BOOST_TEST(d.options->block_cache_bytes == (64ull << 20));
  auto o =
      parse({"--memtable-budget-bytes", "33554432", "--max-batch-bytes", "16777216", "--block-cache-bytes", "4194304"});
  BOOST_REQUIRE(o.options);
  BOOST_TEST(o.options->memtable_budget_bytes == (32ull << 20));
  BOOST_TEST(o.options->block_cache_bytes == (4ull << 20));
  expect_refused({"--memtable-budget-bytes", "1048576"}, "--memtable-budget-bytes");
  // Two batches at least: 64 MiB batches need 128 MiB.
  expect_refused({"--memtable-budget-bytes", "67108864"}, "2 x --max-batch-bytes");
  expect_refused({"--block-cache-bytes", "0"}, "--block-cache-bytes");
}

BOOST_AUTO_TEST_CASE(dafka_retention_flags_and_defaults) {
  auto d = parse({});
  BOOST_REQUIRE(d.options);
  const auto& def = d.options->dafka_retention.defaults;
  BOOST_TEST(def.ms == 7ull * 24 * 3600 * 1000);
  BOOST_TEST(def.bytes == (1ull << 30));
  BOOST_TEST(def.records == 0u);
  BOOST_TEST(d.options->dafka_retention_interval_ms == 5000u);
  auto o = parse({"--dafka-retain-ms", "0", "--dafka-retain-bytes", "0", "--dafka-retain-records", "100",
                  "--dafka-retention-interval-ms", "100"});
  BOOST_REQUIRE(o.options);
  BOOST_TEST((o.options->dafka_retention.defaults == zstore::storage::DafkaRetentionPolicy{0, 0, 100}));
  BOOST_TEST(o.options->dafka_retention_interval_ms == 100u);
  expect_refused({"--dafka-retain-records", "many"}, "dafka-retain-records");
  expect_refused({"--dafka-retention-interval-ms", "0"}, "--dafka-retention-interval-ms");
}

BOOST_AUTO_TEST_CASE(dafka_topic_sections_of_the_config_file_override_the_defaults) {
  zstore::testing::TempDir dir;
  auto path = (dir.path() / "zstored.conf").string();
  std::ofstream(path) << "dafka-retain-records = 50\n"
                         "[dafka-topic logs/]\n"
                         "dafka-retain-ms = 60000\n"
                         "[dafka-topic logs/audit.]\n"
                         "dafka-retain-bytes = 0\n"
                         "dafka-retain-ms = 0\n";
  auto o = parse({"--config", path});
  BOOST_REQUIRE_MESSAGE(o.options, o.message);
  const auto& rules = o.options->dafka_retention;
  BOOST_TEST(rules.defaults.records == 50u);
  BOOST_TEST((rules.lookup("logs/app") == zstore::storage::DafkaRetentionPolicy{60000, 1ull << 30, 50}));
  BOOST_TEST((rules.lookup("logs/audit.x") == zstore::storage::DafkaRetentionPolicy{0, 0, 50}));
  BOOST_TEST((rules.lookup("metrics") == rules.defaults));

  std::ofstream(path) << "[dafka-topic logs/]\ndafka-retain-minutes = 1\n";
  auto bad_key = parse({"--config", path});
  BOOST_TEST(bad_key.exit_code == 2);
  BOOST_TEST(bad_key.message.find("dafka-retain-minutes") != std::string::npos, bad_key.message);
  std::ofstream(path) << "no-such-flag = 1\n";
  auto unknown = parse({"--config", path});
  BOOST_TEST(unknown.exit_code == 2);
  BOOST_TEST(unknown.message.find("no-such-flag") != std::string::npos, unknown.message);
  std::ofstream(path) << "[dafka-topic logs/]\ndafka-retain-ms = soon\n";
  BOOST_TEST(parse({"--config", path}).exit_code == 2);
}

BOOST_AUTO_TEST_CASE(curve_covers_dafka_so_its_ports_stay_on) {
  auto o = parse({"--curve-cert", "server.key_secret", "--curve-allow", "allow"});
  BOOST_REQUIRE_MESSAGE(o.options, o.message);
  BOOST_TEST(o.options->dafka_port == 5582u);
  BOOST_TEST(o.options->tower_port == 5580u);
}

BOOST_AUTO_TEST_CASE(towers_are_tcp_endpoints_with_room_for_the_xpub_port) {
  auto o = parse({"--towers", "tcp://127.0.0.1:5580,tcp://[::1]:65534"});
  BOOST_REQUIRE_MESSAGE(o.options, o.message);
  BOOST_TEST(o.options->towers.size() == 2u);
  for (const char* bad : {"tcp://nohost", "tcp://h:0", "tcp://h:12x", "tcp://:5580", "tcp://h:65535", "h:5580"}) {
    BOOST_TEST_CONTEXT("--towers " << bad) { expect_refused({"--towers", bad}, "--towers"); }
  }
}

BOOST_AUTO_TEST_CASE(the_ha_peer_chp_base_leaves_room_for_its_three_ports) {
  std::vector<std::string> ha = {
      "--ha", "primary", "--ha-bind", "tcp://127.0.0.1:5003", "--ha-peer", "tcp://127.0.0.1:5004", "--ha-peer-chp"};
  auto with_peer = [&](const char* peer) {
    auto args = ha;
    args.push_back(peer);
    return args;
  };
  auto o = parse(with_peer("tcp://127.0.0.1:65533"));
  BOOST_REQUIRE_MESSAGE(o.options, o.message);
  expect_refused(with_peer("tcp://127.0.0.1:65534"), "--ha-peer-chp");
  expect_refused(with_peer("tcp://127.0.0.1"), "--ha-peer-chp");
}

BOOST_AUTO_TEST_CASE(replica_flags) {
  auto o = parse({"--replica-of", "tcp://10.0.0.1:5556,tcp://10.0.0.2:5556", "--replica-stale-ms", "2500"});
  BOOST_REQUIRE(o.options);
  BOOST_TEST(o.options->replica_of.size() == 2u);
  BOOST_TEST(o.options->replica_of[1] == "tcp://10.0.0.2:5556");
  BOOST_TEST(o.options->replica_stale_ms == 2500u);
  BOOST_TEST(parse({}).options->replica_of.empty());
  expect_refused({"--replica-of", "tcp://h:5556", "--ha", "primary", "--ha-bind", "tcp://127.0.0.1:5003", "--ha-peer",
                  "tcp://127.0.0.1:5004", "--ha-peer-chp", "tcp://127.0.0.1:5566"},
                 "--replica-of cannot be combined with --ha");
  expect_refused({"--replica-of", "h:5556"}, "--replica-of: 'h:5556'");
  expect_refused({"--replica-of", "tcp://h:65534"}, "--replica-of");
  expect_refused({"--replica-of", "tcp://a:1,tcp://b:1,tcp://c:1"}, "at most two");
  expect_refused({"--replica-of", ","}, "--replica-of: no upstream");
  expect_refused({"--replica-of", "tcp://h:5556", "--chp-port", "0"}, "--replica-of needs CHP");
  expect_refused({"--replica-of", "tcp://h:5556", "--replica-stale-ms", "0"}, "--replica-stale-ms");
  BOOST_TEST(parse({"--replica-of", "tcp://h:5556", "--replica-subtree", "/site-a/"}).options->replica_subtree ==
             "/site-a/");
  expect_refused({"--replica-subtree", "/site-a/"}, "--replica-subtree needs --replica-of");
}

// Per-key history (chp_versions, HISTORY?) is opt-in: it writes each value twice.
BOOST_AUTO_TEST_CASE(chp_key_history_flag_is_off_by_default) {
  auto d = parse({});
  BOOST_REQUIRE(d.options);
  BOOST_TEST(!d.options->chp_key_history);
  auto o = parse({"--chp-key-history"});
  BOOST_REQUIRE(o.options);
  BOOST_TEST(o.options->chp_key_history);
}
