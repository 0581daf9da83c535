// Resume (docs/chp-extensions.md) through real zstored processes: after a
// Binary Star failover a resuming client and one that takes full snapshots
// end with the same map, key by key, with the sets, deletes and TTL
// expiries of the outage; a whole-map client pushed past the publisher's
// high-water mark detects the gap and catches up.
#include <signal.h>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "client/clone_client.h"
#include "tests/support/chp_peer.h"
#include "tests/support/zstored_fixtures.h"

using namespace std::chrono_literals;
using zstore::client::CloneClient;
using zstore::testing::ChpPeer;
using zstore::testing::HaPair;
using zstore::testing::wait_until;

namespace {

// Clients here fail over after 1 s of silence: their servers send HUGZ well
// within it (client/options.h). With zstored's default of 1 s a new session
// that just missed a HUGZ heard the next one only after its own timeout, and
// restarted in the same phase again and again (a writer not synced in 10 s).
constexpr int kHugzMs = 200;

zstore::client::Options options(std::vector<std::string> servers, bool resume) {
  zstore::client::Options o;
  o.servers = std::move(servers);
  o.failover_timeout = 1000ms;
  o.snapshot_retry_max = 500ms;
  o.resume = resume;
  return o;
}

// Every counter of a client, for a failure message.
std::string describe(const zstore::client::ClientStats& s) {
  std::ostringstream out;
  out << "server " << s.current_server << ", failovers " << s.failovers << ", resyncs " << s.resyncs << ", gaps "
      << s.gaps << ", requests " << s.snapshot_requests << ", snapshots " << s.snapshots_applied << ", resumes "
      << s.resumes << ", malformed " << s.malformed_dropped << ", agent errors " << s.agent_errors << ", last error '"
      << s.last_error << "'";
  return out.str();
}

std::map<std::string, std::string> values(const zstore::testing::ChpSnapshot& snap) {
  std::map<std::string, std::string> out;
  for (const auto& [key, kv] : snap.entries) {
    if (!kv.body.empty()) out[key] = kv.body;
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(resume_after_failover_ends_with_the_same_map_as_a_full_snapshot) {
  HaPair pair;
  pair.wait_active_and_synced();
  std::vector<std::string> servers{pair.primary.chp_endpoint(), pair.backup.chp_endpoint()};
  CloneClient writer(options(servers, false));
  // Synced before the writes: the one-second keys reach them as updates,
  // not through a snapshot that a slow sync could take after they expired.
  CloneClient resuming(options(servers, true));
  CloneClient full(options(servers, false));
  BOOST_REQUIRE(writer.wait_synced(10s));
  BOOST_REQUIRE(resuming.wait_synced(10s));
  BOOST_REQUIRE(full.wait_synced(10s));
  for (int i = 0; i < 200; ++i) writer.set("/k" + std::to_string(i), "a" + std::to_string(i));
  for (int i = 0; i < 10; ++i) writer.set("/t" + std::to_string(i), "short-lived", 1);
  BOOST_REQUIRE(writer.wait_published(writer.set("/marker", "1"), 10s));
  BOOST_REQUIRE(resuming.wait_for([&] { return resuming.get("/t9").has_value(); }, 5s));
  {
    // A HUGZ after the last update: the passive has had it for a while.
    zmq::context_t ctx;
    ChpPeer probe(ctx, "tcp://127.0.0.1", pair.primary.chp_port());
    BOOST_REQUIRE(wait_until([&] {
      auto u = probe.next_update(300ms);
      auto* h = u ? std::get_if<zstore::protocol::chp::Hugz>(&*u) : nullptr;
      return h && h->sequence >= resuming.sequence();
    }));
  }

  // The outage: the primary dies; sets and deletes reach only the backup's
  // pending list (applied when it takes over) and the ttls run out.
  pair.primary.kill(SIGKILL);
  const bool primary_ended = pair.primary.wait_exit(5s) >= 0;
  for (int i = 0; i < 50; ++i) writer.set("/k" + std::to_string(i), "b" + std::to_string(i));
  for (int i = 50; i < 100; ++i) writer.erase("/k" + std::to_string(i));
  auto last = writer.set("/marker", "2");

  for (auto* c : {&resuming, &full}) {
    BOOST_REQUIRE_MESSAGE(c->wait_for([&] { return c->stats().failovers > 0 && c->synced(); }, 15s),
                          (c == &resuming ? "resuming" : "full")
                              << " client: synced " << c->synced() << ", " << describe(c->stats())
                              << "; the other: " << describe((c == &resuming ? full : resuming).stats())
                              << "; primary ended " << primary_ended << "; primary's log:\n"
                              << pair.primary.log() << "backup's log:\n"
                              << pair.backup.log());
  }
  BOOST_REQUIRE(writer.wait_published(last, 15s));
  zmq::context_t ctx;
  ChpPeer reader(ctx, "tcp://127.0.0.1", pair.backup.chp_port());
  BOOST_REQUIRE(wait_until(
      [&] {
        auto snap = reader.snapshot("", 2s);
        return snap && snap->entries.count("/t0") == 0 && snap->entries.at("/marker").body == "2";
      },
      10s));
  auto snap = reader.snapshot("", 5s);
  BOOST_REQUIRE(snap);
  const auto expected = values(*snap);
  BOOST_CHECK(full.wait_for([&] { return full.snapshot_map() == expected; }, 10s));
  BOOST_CHECK(resuming.wait_for([&] { return resuming.snapshot_map() == expected; }, 10s));
  BOOST_CHECK(resuming.snapshot_map() == full.snapshot_map());
  BOOST_CHECK_EQUAL(resuming.get("/k10").value_or(""), "b10");
  BOOST_CHECK(!resuming.get("/k60").has_value());
  BOOST_CHECK(!resuming.get("/t3").has_value());
  BOOST_CHECK_EQUAL(resuming.get("/k150").value_or(""), "a150");
  BOOST_CHECK_GE(resuming.stats().resumes, 1u);
  BOOST_CHECK_EQUAL(full.stats().resumes, 0u);
}

// A whole-map client whose application stalls: the server's publisher
// drops updates for it past the high-water marks. When it reads again it
// sees the sequence jump, resumes, and ends with the server's map.
BOOST_AUTO_TEST_CASE(a_client_pushed_past_the_high_water_mark_detects_the_gap_and_catches_up) {
  zstore::testing::Zstored server{{"--hugz-interval-ms", std::to_string(kHugzMs)}};
  BOOST_REQUIRE(server.start());
  std::atomic<bool> stall{false};
  std::atomic<bool> stalled{false};
  auto o = options({server.chp_endpoint()}, true);
  o.failover_timeout = 30s;  // the stall must not look like a dead server
  o.max_queued_updates = 100;
  o.on_change = [&](const zstore::client::Change&) {
    while (stall) {
      stalled = true;
      std::this_thread::sleep_for(1ms);  // the stalled callback is the subject, not a wait
    }
  };
  CloneClient slow(o);
  BOOST_REQUIRE(slow.wait_synced(10s));
  CloneClient writer(options({server.chp_endpoint()}, true));
  BOOST_REQUIRE(writer.wait_synced(10s));
  BOOST_REQUIRE(writer.wait_published(writer.set("/first", "x"), 10s));
  BOOST_REQUIRE(slow.wait_for([&] { return slow.get("/first").has_value(); }, 10s));

  stall = true;
  writer.set("/stall", "now");
  BOOST_REQUIRE(wait_until([&] { return stalled.load(); }, 10s));
  const std::string value(200, 'v');
  std::string last;
  for (int i = 0; i < 300000; ++i) last = writer.set("/k" + std::to_string(i), value);
  BOOST_REQUIRE(writer.wait_published(last, 60s));
  stall = false;

  zmq::context_t ctx;
  ChpPeer reader(ctx, "tcp://127.0.0.1", server.chp_port());
  auto snap = reader.snapshot("", 20s);
  BOOST_REQUIRE(snap);
  const auto expected = values(*snap);
  BOOST_CHECK(slow.wait_for([&] { return slow.snapshot_map() == expected; }, 30s));
  BOOST_CHECK_GE(slow.stats().gaps, 1u);
  BOOST_CHECK_GE(slow.stats().resumes, 1u);
}
