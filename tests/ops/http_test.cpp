// zstored's HTTP side against the real binary: /healthz and /metrics values
// after CHP writes, malformed counters by kind, 404/405, the --http-port
// option sources, and zstore-cli admin health exit codes.
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include <csignal>
#include <fstream>

#include "server/options/options.h"
#include "tests/ops/ops_support.h"
#include "tests/support/chp_peer.h"

using namespace zstore::testing;
using namespace std::chrono_literals;

namespace {

std::string seq8(std::uint64_t n) { return std::string(8, '\0').replace(7, 1, 1, static_cast<char>(n)); }

std::string kind(const std::string& k) { return "zstore_chp_malformed_total{kind=\"" + k + "\"}"; }

}  // namespace

BOOST_AUTO_TEST_CASE(healthz_and_metrics_follow_chp_writes) {
  HttpZstored z;
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  zmq::context_t ctx;
  ChpPeer peer(ctx, "tcp://127.0.0.1", z.server.chp_port());
  BOOST_REQUIRE(peer.wait_connected());
  // A connection probe can still be in flight: once this marker is
  // published, every earlier set from this peer is applied, and once the
  // snapshot after it is served (the same loop, a later turn), counted.
  peer.set("ops/marker", "1");
  BOOST_REQUIRE(peer.wait_kvpub("ops/marker", 10s));
  BOOST_REQUIRE(peer.snapshot());
  double applied_before = metric(z.metrics(), "zstore_chp_updates_applied_total");

  const int n = 7;
  for (int i = 0; i < n; ++i) peer.set("ops/k" + std::to_string(i), "v" + std::to_string(i));
  auto last = peer.wait_kvpub("ops/k" + std::to_string(n - 1), 10s);
  BOOST_REQUIRE(last);
  auto snap = peer.snapshot();
  BOOST_REQUIRE(snap);

  auto m = z.metrics();
  BOOST_TEST(metric(m, "zstore_chp_updates_applied_total") == applied_before + n);
  BOOST_TEST(metric(m, "zstore_chp_last_sequence") == double(last->sequence));
  BOOST_TEST(metric(m, "zstore_chp_last_sequence") == double(snap->sequence));
  BOOST_TEST(metric(m, "zstore_chp_keys") == double(snap->entries.size()));
  BOOST_TEST(metric(m, "zstore_chp_key_index_bytes") > 0.0);  // the keys just written are in it
  BOOST_TEST(metric(m, "zstore_chp_snapshots_served_total") >= 1.0);
  BOOST_TEST(metric(m, "zstore_ha_state{state=\"standalone\"}") == 1.0);
  BOOST_TEST(metric(m, "zstore_ha_state{state=\"active\"}") == 0.0);
  BOOST_TEST(metric(m, "zstore_rocksdb_memtable_bytes{column_family=\"chp_map\"}") > 0.0);
  BOOST_TEST(m.count("zstore_dafka_records_stored_total") == 0u);  // the store is off in this server

  HttpReply h = http_request(z.http_port, "GET", "/healthz");
  BOOST_REQUIRE_EQUAL(h.status, 200);
  auto body = nlohmann::json::parse(h.body);
  BOOST_TEST(body["status"] == "ok");
  BOOST_TEST(body["role"] == "standalone");
  BOOST_TEST(body["database"] == "open");
  BOOST_TEST(body["loops"]["chp"]["state"] == "running");
  BOOST_TEST(body["uptime_seconds"].is_number());
}

// RocksDB's backlog on /metrics: nothing owed and no stall on a fresh
// server; a checkpoint flushes the memtables, and chp_map's level-0 table
// shows up.
BOOST_AUTO_TEST_CASE(metrics_show_the_storage_backlog_and_write_stalls) {
  TempDir backups;
  HttpZstored z({"--backup-dir", backups.str()});
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  zmq::context_t ctx;
  ChpPeer peer(ctx, "tcp://127.0.0.1", z.server.chp_port());
  BOOST_REQUIRE(peer.wait_connected());
  for (int i = 0; i < 20; ++i) peer.set("backlog/" + std::to_string(i), "v");
  BOOST_REQUIRE(peer.wait_kvpub("backlog/19", 10s));

  const std::string chp_map = "{column_family=\"chp_map\"}";
  auto m = z.metrics();
  BOOST_TEST(metric(m, "zstore_rocksdb_level0_files" + chp_map) == 0.0);
  BOOST_TEST(metric(m, "zstore_rocksdb_immutable_memtables" + chp_map) == 0.0);
  BOOST_TEST(metric(m, "zstore_rocksdb_pending_compaction_bytes" + chp_map) == 0.0);
  BOOST_TEST(metric(m, "zstore_rocksdb_write_delayed") == 0.0);
  BOOST_TEST(metric(m, "zstore_rocksdb_write_stopped") == 0.0);
  BOOST_TEST(metric(m, "zstore_rocksdb_write_delays_total") == 0.0);
  BOOST_TEST(metric(m, "zstore_rocksdb_write_stops_total") == 0.0);
  // Flushes and compactions are paced only with --shared-core.
  BOOST_TEST(m.count("zstore_rocksdb_background_pacing_lifted") == 0u);
  BOOST_TEST(m.count("zstore_rocksdb_background_pacing_lifts_total") == 0u);

  BOOST_REQUIRE_EQUAL(http_request(z.http_port, "POST", "/admin/checkpoint", "dir=cp").status, 201);
  m = z.metrics();
  BOOST_TEST(metric(m, "zstore_rocksdb_level0_files" + chp_map) == 1.0);
  BOOST_TEST(metric(m, "zstore_rocksdb_memtable_bytes" + chp_map) < 64.0 * 1024);  // flushed: an empty one
}

BOOST_AUTO_TEST_CASE(malformed_chp_messages_are_counted_by_kind) {
  HttpZstored z({"--max-value-bytes", "64"});
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  zmq::context_t ctx;
  ChpPeer peer(ctx, "tcp://127.0.0.1", z.server.chp_port());
  BOOST_REQUIRE(peer.wait_connected());
  peer.send_collector({"only one frame"});                             // frame_count
  peer.send_collector({"k", "abc", "", "", "v"});                      // bad_field: 3-byte sequence
  peer.send_collector({"k", seq8(0), "", "", "v"});                    // valid, as a marker below
  peer.send_collector({"k", seq8(0), "", "", std::string(100, 'x')});  // too_large
  peer.send_collector({"k", seq8(0), "", "", std::string(100, 'y')});  // too_large
  BOOST_REQUIRE(wait_until([&] { return metric(z.metrics(), kind("too_large")) == 2.0; }));
  auto m = z.metrics();
  BOOST_TEST(metric(m, kind("frame_count")) == 1.0);
  BOOST_TEST(metric(m, kind("bad_field")) == 1.0);
  for (const char* k : {"truncated", "trailing", "bad_version", "unknown_id"}) BOOST_TEST(metric(m, kind(k)) == 0.0, k);
}

BOOST_AUTO_TEST_CASE(unknown_paths_are_404_and_wrong_methods_405) {
  HttpZstored z;
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  BOOST_TEST(http_request(z.http_port, "GET", "/nope").status == 404);
  BOOST_TEST(http_request(z.http_port, "GET", "/healthz/x").status == 404);
  HttpReply r = http_request(z.http_port, "POST", "/metrics", "x=1");
  BOOST_TEST(r.status == 405);
  BOOST_TEST(r.allow == "GET");
  BOOST_TEST(http_request(z.http_port, "DELETE", "/healthz").status == 405);
  r = http_request(z.http_port, "GET", "/admin/checkpoint");
  BOOST_TEST(r.status == 405);
  BOOST_TEST(r.allow == "POST");
  r = http_request(z.http_port, "POST", "/admin/checkpoint", "");
  BOOST_TEST(r.status == 400);
  BOOST_TEST(r.body.find("dir") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(http_port_comes_from_flag_env_or_config_file) {
  using zstore::server::parse_options;
  TempDir dir;
  std::string ini = (dir.path() / "z.ini").string();
  std::ofstream(ini) << "http-port=4321\n";
  const char* env[] = {"ZSTORE_HTTP_PORT=1234", nullptr};
  const char* none[] = {nullptr};

  const char* defaults[] = {"zstored"};
  BOOST_TEST(parse_options(1, defaults, none).options->http_port == 0);
  const char* flag[] = {"zstored", "--http-port", "8080"};
  BOOST_TEST(parse_options(3, flag, env).options->http_port == 8080);
  BOOST_TEST(parse_options(1, defaults, env).options->http_port == 1234);
  std::string config = "--config=" + ini;
  const char* file[] = {"zstored", config.c_str()};
  BOOST_TEST(parse_options(2, file, none).options->http_port == 4321);
  BOOST_TEST(parse_options(2, file, env).options->http_port == 1234);
  const char* bad[] = {"zstored", "--http-port", "70000"};
  auto out = parse_options(3, bad, none);
  BOOST_TEST(out.exit_code == 2);
  BOOST_TEST(out.message.find("http-port") != std::string::npos, out.message);
}

BOOST_AUTO_TEST_CASE(cli_admin_health_exit_code_follows_the_server) {
  HttpZstored z;
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  std::string server = "http://127.0.0.1:" + std::to_string(z.http_port);
  std::string out;
  BOOST_TEST(run_command({bin_path("zstore-cli"), "admin", "--server", server, "health"}, &out) == 0, out);
  BOOST_TEST(out.find("\"status\":\"ok\"") != std::string::npos, out);
  z.server.kill(SIGTERM);
  BOOST_REQUIRE_EQUAL(z.server.wait_exit(), 0);
  out.clear();
  BOOST_TEST(
      run_command({bin_path("zstore-cli"), "admin", "--server", server, "--timeout-ms", "2000", "health"}, &out) == 1,
      out);
  out.clear();
  BOOST_TEST(run_command({bin_path("zstore-cli"), "admin", "--server", "ftp://x", "health"}, &out) == 2, out);
  BOOST_TEST(run_command({bin_path("zstore-cli"), "admin", "--server", server, "bogus"}, &out) == 2, out);
  for (const char* bad : {"0", "-5", "5s", "abc", "99999999999999999999999"}) {
    out.clear();
    BOOST_TEST(
        run_command({bin_path("zstore-cli"), "admin", "--server", server, "--timeout-ms", bad, "health"}, &out) == 2,
        out);
    BOOST_TEST(out.find("--timeout-ms needs a number from 1 to 86400000") != std::string::npos, out);
  }
}

BOOST_AUTO_TEST_CASE(http_port_in_use_stops_start_up_with_a_clear_message) {
  HttpZstored first;
  BOOST_REQUIRE_MESSAGE(first.server.start(), first.server.log());
  Zstored second({"--http-port", std::to_string(first.http_port)});
  BOOST_TEST(!second.start());
  BOOST_TEST(second.wait_exit() == 1);
  BOOST_TEST(second.log().find("cannot bind HTTP on 127.0.0.1:" + std::to_string(first.http_port)) != std::string::npos,
             second.log());
}
