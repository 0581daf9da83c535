// In-process: /healthz turns 503 when a reactor loop's heartbeat is absent
// or stale, whatever the other loop does, and says "degraded" while a port
// is unbound; Prometheus label escaping.
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include "server/http/http_health.h"
#include "server/http/http_server.h"
#include "server/http/metrics_text.h"
#include "server/dafka/tower.h"
#include "tests/ops/ops_support.h"

using namespace zstore;
using namespace zstore::server;
using zstore::testing::TempDir;
using namespace std::chrono_literals;

namespace {

struct Fixture {
  TempDir dir;
  std::unique_ptr<storage::Database> db;
  ChpMetrics chp;
  DafkaMetrics dafka;
  TowerMetrics tower;
  ServerView view;
  Fixture() {
    auto s = storage::Database::Open(dir.str(), storage::DatabaseOptions{}, &db);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.message());
    view.db = db.get();
    view.chp = &chp;
    view.dafka = &dafka;
    view.tower = &tower;
    view.ha_state = [] { return std::string("passive"); };
  }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(health_needs_every_loop_fresh, Fixture) {
  BOOST_TEST(!check_health(view, 5000ms).healthy);  // never turned
  chp.loop_heartbeat_ms = loop_clock_ms();
  dafka.loop_heartbeat_ms = loop_clock_ms();
  BOOST_TEST(!check_health(view, 5000ms).healthy);  // the tower never turned
  tower.loop_heartbeat_ms = loop_clock_ms();
  Health h = check_health(view, 5000ms);
  BOOST_TEST(h.healthy);
  auto body = nlohmann::json::parse(h.body);
  BOOST_TEST(body["role"] == "passive");
  BOOST_TEST(body["loops"]["dafka"]["state"] == "running");

  dafka.loop_heartbeat_ms = loop_clock_ms() - 6000;  // stuck
  h = check_health(view, 5000ms);
  BOOST_TEST(!h.healthy);
  body = nlohmann::json::parse(h.body);
  BOOST_TEST(body["status"] == "unhealthy");
  BOOST_TEST(body["loops"]["dafka"]["state"] == "stuck");
  BOOST_TEST(body["loops"]["chp"]["state"] == "running");

  dafka.loop_heartbeat_ms = loop_clock_ms();
  chp.loop_heartbeat_ms = 0;  // stopped
  h = check_health(view, 5000ms);
  BOOST_TEST(!h.healthy);
  BOOST_TEST(nlohmann::json::parse(h.body)["loops"]["chp"]["state"] == "stopped");
}

// A port being bound again (bound_endpoint.h) degrades the server, without
// failing the check: its loop serves its other ports and retries.
BOOST_FIXTURE_TEST_CASE(an_unbound_port_degrades_health, Fixture) {
  for (auto* beat : {&chp.loop_heartbeat_ms, &dafka.loop_heartbeat_ms, &tower.loop_heartbeat_ms}) {
    *beat = loop_clock_ms();
  }
  BOOST_TEST(nlohmann::json::parse(check_health(view, 5000ms).body)["status"] == "ok");
  tower.ports_unbound = 2;
  Health h = check_health(view, 5000ms);
  BOOST_TEST(h.healthy);
  auto body = nlohmann::json::parse(h.body);
  BOOST_TEST(body["status"] == "degraded");
  BOOST_TEST(body["loops"]["tower"]["ports_unbound"] == 2);
  BOOST_TEST(!body["loops"]["chp"].contains("ports_unbound"));
  auto m = zstore::testing::parse_prometheus(render_metrics(view));
  BOOST_TEST(zstore::testing::metric(m, "zstore_ports_unbound{loop=\"tower\"}") == 2.0);
  BOOST_TEST(zstore::testing::metric(m, "zstore_ports_unbound{loop=\"chp\"}") == 0.0);
  tower.ports_unbound = 0;
  BOOST_TEST(nlohmann::json::parse(check_health(view, 5000ms).body)["status"] == "ok");
}

BOOST_FIXTURE_TEST_CASE(healthz_answers_503_for_a_stuck_loop, Fixture) {
  view.dafka = nullptr;  // a server without the Dafka store and tower
  view.tower = nullptr;
  HttpConfig config;  // loopback, an ephemeral port
  config.stale_after = 300ms;
  HttpServer http(config, view);
  http.start();
  chp.loop_heartbeat_ms = loop_clock_ms();
  BOOST_TEST(zstore::testing::http_request(http.port(), "GET", "/healthz").status == 200);
  BOOST_REQUIRE(zstore::testing::wait_until(
      [&] { return zstore::testing::http_request(http.port(), "GET", "/healthz").status == 503; }, 5s));
  auto m = zstore::testing::scrape_metrics(http.port());
  BOOST_TEST(zstore::testing::metric(m, "zstore_ha_state{state=\"passive\"}") == 1.0);
  BOOST_TEST(m.count("zstore_dafka_peers") == 0u);
  http.stop();
  BOOST_TEST(zstore::testing::http_request(http.port(), "GET", "/healthz").status == 0);
}

// /healthz may be asked the moment zstored says it started, before a
// reactor thread has run its first turn: start() itself counts as a beat.
BOOST_FIXTURE_TEST_CASE(a_started_loop_is_running_before_its_first_turn, Fixture) {
  zmq::context_t ctx;
  Tower t(ctx, "127.0.0.1", zstore::testing::free_port_range(2), tower);
  t.start();
  BOOST_TEST(tower.loop_heartbeat_ms.load() != 0);
  t.stop();
  BOOST_TEST(tower.loop_heartbeat_ms.load() == 0);
}

BOOST_AUTO_TEST_CASE(prometheus_labels_are_escaped) {
  PromWriter w;
  w.family("zstore_x", "gauge", "help text");
  w.sample(std::uint64_t{3}, {{"a", "q\"b\\n\nx"}});
  BOOST_TEST(w.text() == "# HELP zstore_x help text\n# TYPE zstore_x gauge\nzstore_x{a=\"q\\\"b\\\\n\\nx\"} 3\n");
}

// A read replica past --replica-stale-ms without its upstream is degraded
// and says so; a fresh one is ok; a non-replica has no replica field.
BOOST_FIXTURE_TEST_CASE(a_stale_replica_degrades_health, Fixture) {
  chp.loop_heartbeat_ms = loop_clock_ms();
  dafka.loop_heartbeat_ms = loop_clock_ms();
  tower.loop_heartbeat_ms = loop_clock_ms();
  BOOST_TEST(!nlohmann::json::parse(check_health(view, 5000ms).body).contains("replica"));
  chp.replica_stale_after_ms = 1000;
  chp.replica_upstream_silent_ms = 200;
  auto body = nlohmann::json::parse(check_health(view, 5000ms).body);
  BOOST_TEST(body["status"] == "ok");
  BOOST_TEST(body["replica"]["upstream"] == "ok");
  chp.replica_upstream_silent_ms = 1500;
  Health h = check_health(view, 5000ms);
  BOOST_TEST(h.healthy);
  body = nlohmann::json::parse(h.body);
  BOOST_TEST(body["status"] == "degraded");
  BOOST_TEST(body["replica"]["upstream"] == "stale");
  BOOST_TEST(body["replica"]["upstream_silent_ms"] == 1500);
}
