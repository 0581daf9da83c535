#include "client/clone_client.h"

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "protocol/chp_codec.h"
#include "tests/client/fake_chp_server.h"
#include "tests/support/test_support.h"

namespace chp = zstore::protocol::chp;
using zstore::client::Change;
using zstore::client::ChangeSource;
using zstore::client::CloneClient;
using zstore::client::Options;
using zstore::protocol::Frames;
using zstore::testing::FakeChpServer;
using zstore::testing::wait_until;
using namespace std::chrono_literals;

namespace {

constexpr auto kDeadline = 10s;

// Collects the change callbacks (called on the client's thread).
class Recorder {
 public:
  std::function<void(const Change&)> callback() {
    return [this](const Change& c) {
      std::lock_guard lock(mu_);
      changes_.push_back(c);
    };
  }
  std::vector<Change> all() const {
    std::lock_guard lock(mu_);
    return changes_;
  }
  // Callbacks run just after the map changed: wait for them too.
  bool wait_count(ChangeSource source, std::size_t n) const {
    return wait_until([&] { return from(source).size() >= n; }, std::chrono::seconds(10));
  }
  std::vector<Change> from(ChangeSource source) const {
    std::vector<Change> out;
    for (const auto& c : all()) {
      if (c.source == source) out.push_back(c);
    }
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Change> changes_;
};

Options options_for(std::vector<std::string> servers, Recorder* recorder = nullptr) {
  Options o;
  o.servers = std::move(servers);
  o.failover_timeout = 10s;  // tests of failover shorten it
  if (recorder != nullptr) o.on_change = recorder->callback();
  return o;
}

Frames kvpub(const std::string& key, std::uint64_t seq, const std::string& value) {
  return chp::encode_kvmsg({key, seq, "", "", value});
}

bool has(const CloneClient& client, const std::string& key, const std::string& value) {
  return client.get(key) == std::optional<std::string>(value);
}

std::string describe(const std::vector<Change>& changes) {
  std::string out;
  for (const auto& c : changes) {
    out += std::to_string(c.sequence) + ":" + c.key + "=" + (c.deleted ? "<deleted>" : c.value) + " ";
  }
  return out;
}

struct Fixture {
  zmq::context_t ctx;
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(clone_client, Fixture)

BOOST_AUTO_TEST_CASE(snapshot_then_updates_arrive_once_each_in_order) {
  FakeChpServer server(ctx);
  server.reset_map({{"a", "1"}, {"b", "2"}, {"c", "3"}}, 5);
  // Updates published both before and after KTHXBAI, some of them at or
  // below the snapshot's sequence and some twice.
  server.set_request_hook([](FakeChpServer& s, const std::string& id, const std::string& subtree, int) {
    s.publish_now(kvpub("b", 5, "2"));
    s.publish_now(kvpub("d", 6, "4"));
    s.publish_now(kvpub("a", 7, "1b"));
    s.answer(id, subtree);
    s.publish_now(kvpub("a", 7, "1b"));
    s.publish_now(kvpub("d", 6, "4"));
    s.publish_now(kvpub("e", 8, "5"));
  });
  Recorder rec;
  Options o = options_for({server.endpoint()}, &rec);
  // One request: a retry would run the hook again, and the count of stale
  // updates below is that of one run.
  o.snapshot_retry_initial = o.snapshot_retry_max = kDeadline;
  CloneClient client(o);

  BOOST_REQUIRE(client.wait_for([&] { return client.sequence() == 8; }, kDeadline));
  const std::map<std::string, std::string> want{{"a", "1b"}, {"b", "2"}, {"c", "3"}, {"d", "4"}, {"e", "5"}};
  BOOST_CHECK(client.snapshot_map() == want);
  BOOST_CHECK(client.synced());

  BOOST_CHECK(rec.wait_count(ChangeSource::kUpdate, 3));
  auto initial = rec.from(ChangeSource::kInitialSnapshot);
  BOOST_CHECK_EQUAL(initial.size(), 3u);
  auto updates = rec.from(ChangeSource::kUpdate);
  BOOST_REQUIRE_MESSAGE(updates.size() == 3, describe(updates));
  BOOST_CHECK_EQUAL(updates[0].sequence, 6u);
  BOOST_CHECK_EQUAL(updates[0].key, "d");
  BOOST_CHECK_EQUAL(updates[1].sequence, 7u);
  BOOST_CHECK_EQUAL(updates[1].value, "1b");
  BOOST_CHECK_EQUAL(updates[2].sequence, 8u);
  BOOST_CHECK_EQUAL(client.stats().stale_discarded, 3u);
}

BOOST_AUTO_TEST_CASE(later_snapshot_replaces_the_local_map) {
  FakeChpServer server(ctx);
  server.reset_map({{"a", "1"}, {"b", "2"}}, 2);
  Recorder rec;
  Options o = options_for({server.endpoint()}, &rec);
  o.failover_timeout = 300ms;
  CloneClient client(o);
  BOOST_REQUIRE(client.wait_synced(kDeadline));
  BOOST_CHECK(has(client, "a", "1"));

  // While the client is cut off, "a" is deleted and "b" changed on the server.
  server.set_heartbeat(false);
  server.reset_map({{"b", "2x"}, {"c", "3"}}, 10);
  BOOST_REQUIRE(client.wait_for([&] { return client.stats().failovers >= 1; }, kDeadline));
  server.set_heartbeat(true);

  BOOST_REQUIRE(client.wait_for([&] { return client.synced() && has(client, "c", "3"); }, kDeadline));
  BOOST_CHECK(!client.get("a"));
  BOOST_CHECK(has(client, "b", "2x"));
  BOOST_CHECK_EQUAL(client.sequence(), 10u);

  BOOST_CHECK(rec.wait_count(ChangeSource::kResync, 3));
  auto resync = rec.from(ChangeSource::kResync);
  BOOST_REQUIRE_MESSAGE(resync.size() == 3, describe(resync));
  std::set<std::string> deleted, set;
  for (const auto& c : resync) (c.deleted ? deleted : set).insert(c.key);
  BOOST_CHECK(deleted == std::set<std::string>{"a"});
  BOOST_CHECK((set == std::set<std::string>{"b", "c"}));
}

BOOST_AUTO_TEST_CASE(kvpub_not_above_the_last_sequence_is_discarded) {
  FakeChpServer server(ctx);
  server.reset_map({}, 10);
  Recorder rec;
  CloneClient client(options_for({server.endpoint()}, &rec));
  BOOST_REQUIRE(client.wait_synced(kDeadline));

  server.publish(kvpub("k", 11, "first"));
  server.publish(kvpub("k", 11, "again"));
  server.publish(kvpub("k", 9, "older"));
  server.publish(kvpub("k", 10, "snapshot's"));
  server.publish(kvpub("k", 12, "last"));
  BOOST_REQUIRE(client.wait_for([&] { return client.sequence() == 12; }, kDeadline));
  BOOST_CHECK(has(client, "k", "last"));
  BOOST_CHECK_EQUAL(client.stats().stale_discarded, 3u);
  BOOST_CHECK(rec.wait_count(ChangeSource::kUpdate, 2));
  auto updates = rec.from(ChangeSource::kUpdate);
  BOOST_REQUIRE_MESSAGE(updates.size() == 2, describe(updates));
  BOOST_CHECK_EQUAL(updates[0].value, "first");
  BOOST_CHECK_EQUAL(updates[1].value, "last");
}

BOOST_AUTO_TEST_CASE(subtree_filters_snapshot_and_updates) {
  FakeChpServer server(ctx);
  server.reset_map({{"/a/x", "1"}, {"/b/y", "2"}, {"/ab", "3"}}, 3);
  // A careless server that ignores the subtree in its snapshot.
  server.set_request_hook([](FakeChpServer& s, const std::string& id, const std::string&, int) { s.answer(id, ""); });
  Options o = options_for({server.endpoint()});
  o.subtree = "/a/";
  CloneClient client(o);
  BOOST_REQUIRE(client.wait_synced(kDeadline));
  BOOST_CHECK(server.request_subtrees() == std::vector<std::string>{"/a/"});

  server.store("/b/z", "no");
  server.publish(kvpub("HUGZ-not-a-heartbeat", 5, "no"));  // passes the SUB's "HUGZ" topic
  server.store("/a/w", "yes");
  BOOST_REQUIRE(client.wait_for([&] { return has(client, "/a/w", "yes"); }, kDeadline));
  const std::map<std::string, std::string> want{{"/a/w", "yes"}, {"/a/x", "1"}};
  BOOST_CHECK(client.snapshot_map() == want);
}

BOOST_AUTO_TEST_CASE(fails_over_to_the_second_server_after_silence) {
  auto primary = std::make_unique<FakeChpServer>(ctx);
  FakeChpServer backup(ctx);
  backup.set_heartbeat(false);  // passive servers are silent
  primary->reset_map({{"k", "from-primary"}, {"gone", "x"}}, 3);
  backup.reset_map({{"k", "from-backup"}, {"j", "only-backup"}}, 7);
  Options o = options_for({primary->endpoint(), backup.endpoint()});
  o.failover_timeout = 300ms;
  CloneClient client(o);
  BOOST_REQUIRE(client.wait_synced(kDeadline));
  BOOST_CHECK(has(client, "k", "from-primary"));
  BOOST_CHECK_EQUAL(client.stats().current_server, 0u);

  primary.reset();             // dies
  backup.set_heartbeat(true);  // takes over
  BOOST_REQUIRE(client.wait_for([&] { return client.synced() && has(client, "k", "from-backup"); }, kDeadline));
  BOOST_CHECK_EQUAL(client.stats().current_server, 1u);
  BOOST_CHECK_GE(client.stats().failovers, 1u);
  BOOST_CHECK(has(client, "j", "only-backup"));
  BOOST_CHECK(!client.get("gone"));

  backup.store("n", "new");
  BOOST_CHECK(client.wait_for([&] { return has(client, "n", "new"); }, kDeadline));
}

BOOST_AUTO_TEST_CASE(silent_passive_server_gets_a_vote_and_its_reply_to_the_vote_is_not_used) {
  const auto dead_port = zstore::testing::free_port_range(3);
  FakeChpServer passive(ctx);
  passive.set_heartbeat(false);
  passive.reset_map({{"k", "proven"}}, 2);
  // Binary Star: a passive server whose peer is dead takes over on a client
  // request. It answers that request too, but the client cannot know whether
  // its subscription was live when that snapshot was taken.
  passive.set_request_hook([](FakeChpServer& s, const std::string& id, const std::string& subtree, int number) {
    if (number > 1) return s.answer(id, subtree);
    s.send_to(id, chp::encode_kvmsg({"k", 1, "", "", "from-the-vote"}));
    s.send_to(id, chp::encode_kthxbai({1, subtree, {}}));
    s.set_heartbeat(true);
  });
  Recorder rec;
  Options o = options_for({"tcp://127.0.0.1:" + std::to_string(dead_port), passive.endpoint()}, &rec);
  o.failover_timeout = 300ms;
  CloneClient client(o);
  BOOST_REQUIRE(client.wait_for([&] { return client.synced() && has(client, "k", "proven"); }, kDeadline));
  BOOST_CHECK_EQUAL(client.stats().current_server, 1u);
  BOOST_CHECK_GE(passive.requests(), 2);
  for (const auto& c : rec.all()) BOOST_CHECK_NE(c.value, "from-the-vote");
}

BOOST_AUTO_TEST_CASE(stale_snapshot_reply_from_an_abandoned_request_is_never_applied) {
  std::mutex mu;
  std::string stale_identity;
  auto unreachable = std::make_shared<std::atomic<bool>>(false);
  FakeChpServer first(ctx);
  FakeChpServer second(ctx);
  second.set_heartbeat(false);
  second.reset_map({{"k", "fresh"}}, 4);
  first.set_request_hook([&](FakeChpServer&, const std::string& id, const std::string&, int) {
    std::lock_guard lock(mu);
    stale_identity = id;  // never answered in time
  });
  Options o = options_for({first.endpoint(), second.endpoint()});
  o.failover_timeout = 300ms;
  CloneClient client(o);
  BOOST_REQUIRE(wait_until([&] { return first.requests() >= 1; }, kDeadline));

  first.set_heartbeat(false);
  second.set_heartbeat(true);
  BOOST_REQUIRE(client.wait_for([&] { return client.synced() && has(client, "k", "fresh"); }, kDeadline));

  // The first server answers late, until the request's connection is gone.
  std::string id;
  {
    std::lock_guard lock(mu);
    id = stale_identity;
  }
  BOOST_REQUIRE(wait_until(
      [&] {
        first.run_on_server([unreachable, id](FakeChpServer& s) {
          bool sent = s.send_to(id, chp::encode_kvmsg({"k", 99, "", "", "stale"})) &&
                      s.send_to(id, chp::encode_kthxbai({99, "", {}}));
          if (!sent) *unreachable = true;
        });
        return unreachable->load();
      },
      kDeadline));
  BOOST_CHECK(has(client, "k", "fresh"));
  BOOST_CHECK_EQUAL(client.sequence(), 4u);
}

BOOST_AUTO_TEST_CASE(unanswered_snapshot_requests_are_retried_until_answered) {
  FakeChpServer server(ctx);
  server.reset_map({{"k", "v"}}, 1);
  server.set_request_hook([](FakeChpServer& s, const std::string& id, const std::string& subtree, int number) {
    if (number > 5) s.answer(id, subtree);  // ignores the first five
  });
  Options o = options_for({server.endpoint()});
  o.snapshot_retry_initial = 20ms;
  o.snapshot_retry_max = 80ms;
  CloneClient client(o);
  BOOST_REQUIRE(client.wait_synced(kDeadline));
  BOOST_CHECK(has(client, "k", "v"));
  BOOST_CHECK_GE(server.requests(), 6);
  BOOST_CHECK_GE(client.stats().snapshot_requests, 6u);
  BOOST_CHECK_EQUAL(client.stats().failovers, 0u);
}

BOOST_AUTO_TEST_CASE(every_kvset_reaches_every_server_with_a_fresh_uuid_and_ttl) {
  FakeChpServer primary(ctx);
  FakeChpServer backup(ctx);
  backup.set_heartbeat(false);
  backup.set_echo(false);
  CloneClient client(options_for({primary.endpoint(), backup.endpoint()}));
  // Sent at once, before any connection is up: none may be lost.
  const std::vector<std::string> uuids{client.set("a", "1"), client.set("a", "2", 30), client.erase("a")};

  for (auto* server : {&primary, &backup}) {
    BOOST_REQUIRE(wait_until([&] { return server->kvsets().size() >= 3; }, kDeadline));
    auto kvsets = server->kvsets();
    BOOST_REQUIRE_EQUAL(kvsets.size(), 3u);
    std::set<std::string> distinct;
    for (std::size_t i = 0; i < 3; ++i) {
      BOOST_REQUIRE_EQUAL(kvsets[i].size(), 5u);
      BOOST_CHECK_EQUAL(kvsets[i][0], "a");
      BOOST_CHECK_EQUAL(kvsets[i][1], std::string(8, '\0'));
      BOOST_CHECK_EQUAL(kvsets[i][2].size(), 16u);
      BOOST_CHECK(kvsets[i][2] == uuids[i]);
      distinct.insert(kvsets[i][2]);
    }
    BOOST_CHECK_EQUAL(distinct.size(), 3u);
    BOOST_CHECK_EQUAL(kvsets[0][3], "");
    BOOST_CHECK_EQUAL(kvsets[1][3], "ttl=30\n");
    BOOST_CHECK_EQUAL(kvsets[2][3], "");
    BOOST_CHECK_EQUAL(kvsets[0][4], "1");
    BOOST_CHECK_EQUAL(kvsets[1][4], "2");
    BOOST_CHECK_EQUAL(kvsets[2][4], "");
  }
}

BOOST_AUTO_TEST_CASE(wait_published_sees_the_servers_kvpub_of_our_uuid) {
  FakeChpServer server(ctx);
  CloneClient client(options_for({server.endpoint()}));
  const std::string uuid = client.set("k", "v");
  BOOST_CHECK(client.wait_published(uuid, kDeadline));
  BOOST_CHECK(client.wait_for([&] { return has(client, "k", "v"); }, kDeadline));
  BOOST_CHECK(!client.wait_published(std::string(16, 'x'), 50ms));

  BOOST_REQUIRE(client.wait_synced(kDeadline));
  const std::string del = client.erase("k");
  BOOST_CHECK(client.wait_published(del, kDeadline));
  BOOST_CHECK(client.wait_for([&] { return !client.get("k"); }, kDeadline));
}

BOOST_AUTO_TEST_CASE(malformed_kvpubs_are_dropped_and_counted) {
  FakeChpServer server(ctx);
  CloneClient client(options_for({server.endpoint()}));
  BOOST_REQUIRE(client.wait_synced(kDeadline));

  server.publish({"k"});
  server.publish({"k", std::string(7, '\0'), "", "", "v"});
  server.publish({"k", std::string(9, '\0'), "", "", "v"});
  server.publish({"k", chp::encode_sequence(1), std::string(15, 'u'), "", "v"});
  server.publish({"HUGZ"});
  server.publish({"k", chp::encode_sequence(1), "", "", "v", "extra"});
  server.publish(kvpub("k", 1, "good"));
  BOOST_REQUIRE(client.wait_for([&] { return has(client, "k", "good"); }, kDeadline));
  BOOST_CHECK_EQUAL(client.stats().malformed_dropped, 6u);
  BOOST_CHECK(!client.stats().last_error.empty());

  server.publish(kvpub("k", 2, "still alive"));
  BOOST_CHECK(client.wait_for([&] { return has(client, "k", "still alive"); }, kDeadline));
}

BOOST_AUTO_TEST_CASE(delete_update_removes_the_key_and_reports_it) {
  FakeChpServer server(ctx);
  server.reset_map({{"k", "v"}}, 1);
  Recorder rec;
  CloneClient client(options_for({server.endpoint()}, &rec));
  BOOST_REQUIRE(client.wait_synced(kDeadline));
  BOOST_CHECK(has(client, "k", "v"));
  server.store("k", "");
  BOOST_REQUIRE(client.wait_for([&] { return !client.get("k"); }, kDeadline));
  BOOST_CHECK(rec.wait_count(ChangeSource::kUpdate, 1));
  auto updates = rec.from(ChangeSource::kUpdate);
  BOOST_REQUIRE_EQUAL(updates.size(), 1u);
  BOOST_CHECK(updates[0].deleted);
  BOOST_CHECK_EQUAL(updates[0].key, "k");
  BOOST_CHECK_EQUAL(updates[0].sequence, 2u);
}

BOOST_AUTO_TEST_CASE(hugz_with_a_lower_sequence_forces_a_resync) {
  FakeChpServer server(ctx);
  server.reset_map({{"k", "v"}}, 50);
  CloneClient client(options_for({server.endpoint()}));
  BOOST_REQUIRE(client.wait_synced(kDeadline));
  BOOST_CHECK_EQUAL(client.sequence(), 50u);

  server.publish(chp::encode_hugz({50}));         // the stream shows sequence 50
  server.reset_map({{"k", "after-restart"}}, 3);  // then the server loses its history
  server.publish(chp::encode_hugz({3}));
  BOOST_REQUIRE(client.wait_for([&] { return client.synced() && has(client, "k", "after-restart"); }, kDeadline));
  BOOST_CHECK_EQUAL(client.sequence(), 3u);
  BOOST_CHECK_GE(client.stats().resyncs, 1u);
  server.store("k", "next");
  BOOST_CHECK(client.wait_for([&] { return has(client, "k", "next"); }, kDeadline));
}

BOOST_AUTO_TEST_CASE(hugz_below_the_snapshot_but_not_below_the_stream_is_no_reason_to_resync) {
  // A HUGZ sent before the snapshot was taken can arrive after KTHXBAI: the
  // SUB and the DEALER are different connections.
  FakeChpServer server(ctx);
  server.reset_map({{"k", "v"}}, 50);
  server.set_request_hook([](FakeChpServer& s, const std::string& id, const std::string& subtree, int) {
    s.answer(id, subtree);
    s.publish_now(chp::encode_hugz({40}));
  });
  CloneClient client(options_for({server.endpoint()}));
  BOOST_REQUIRE(client.wait_synced(kDeadline));
  server.store("k", "w");
  BOOST_REQUIRE(client.wait_for([&] { return has(client, "k", "w"); }, kDeadline));
  BOOST_CHECK_EQUAL(client.stats().resyncs, 0u);
}

// A reference server announces no history: however the client resyncs,
// its snapshot requests stay the 2-frame ICANHAZ? (the C reference server
// misreads a third frame). A sequence jump is a gap: a fresh snapshot.
BOOST_AUTO_TEST_CASE(a_reference_server_never_gets_the_resume_frame_and_a_gap_resyncs) {
  FakeChpServer server(ctx);
  server.reset_map({{"k", "v"}}, 10);
  CloneClient client(options_for({server.endpoint()}));
  BOOST_REQUIRE(client.wait_synced(kDeadline));
  server.reset_map({{"k", "v2"}, {"j", "w"}}, 20);
  server.publish(kvpub("j", 20, "w"));  // 11..19 never reached us
  BOOST_REQUIRE(client.wait_for([&] { return client.synced() && has(client, "k", "v2"); }, kDeadline));
  BOOST_CHECK_EQUAL(client.sequence(), 20u);
  BOOST_CHECK_GE(client.stats().gaps, 1u);
  auto resumes = server.request_resumes();
  BOOST_REQUIRE_GE(resumes.size(), 2u);
  for (const auto& r : resumes) BOOST_CHECK(!r.has_value());
}

// Once a server announced history-from, the client's next request names its
// last sequence; a server that answers with a plain snapshot anyway (no
// resumed=1) still replaces the map.
BOOST_AUTO_TEST_CASE(after_history_from_the_client_asks_to_resume_and_takes_a_snapshot_reply_whole) {
  FakeChpServer server(ctx);
  server.set_kthxbai_properties("history-from=0\n");
  server.reset_map({{"gone", "x"}, {"k", "v"}}, 10);
  CloneClient client(options_for({server.endpoint()}));
  BOOST_REQUIRE(client.wait_synced(kDeadline));
  server.reset_map({{"k", "v2"}}, 20);
  server.publish(chp::encode_hugz({20}));  // above our 10: we missed updates
  BOOST_REQUIRE(client.wait_for([&] { return client.synced() && has(client, "k", "v2"); }, kDeadline));
  BOOST_CHECK(!client.get("gone").has_value());
  BOOST_CHECK_GE(client.stats().gaps, 1u);
  BOOST_CHECK_EQUAL(client.stats().resumes, 0u);
  auto resumes = server.request_resumes();
  BOOST_REQUIRE_GE(resumes.size(), 2u);
  BOOST_CHECK(!resumes.front().has_value());  // nothing announced yet
  BOOST_REQUIRE(resumes.back().has_value());
  BOOST_CHECK_EQUAL(*resumes.back(), 10u);
}

BOOST_AUTO_TEST_CASE(change_callback_may_read_the_client_and_its_exceptions_are_counted) {
  FakeChpServer server(ctx);
  std::atomic<CloneClient*> self{nullptr};
  std::atomic<int> seen{0};
  Options o = options_for({server.endpoint()});
  o.on_change = [&](const Change& c) {
    if (CloneClient* client = self.load()) {
      if (client->get(c.key) == std::optional<std::string>(c.value)) ++seen;
    }
    throw std::runtime_error("callback failure");
  };
  CloneClient client(o);
  self = &client;
  BOOST_REQUIRE(client.wait_synced(kDeadline));
  server.store("k", "v");
  BOOST_REQUIRE(client.wait_for([&] { return client.stats().callback_errors >= 1; }, kDeadline));
  BOOST_CHECK_EQUAL(seen.load(), 1);
  server.store("k", "w");
  BOOST_CHECK(client.wait_for([&] { return has(client, "k", "w"); }, kDeadline));
}

BOOST_AUTO_TEST_CASE(concurrent_writers_and_readers) {
  FakeChpServer server(ctx);
  CloneClient client(options_for({server.endpoint()}));
  BOOST_REQUIRE(client.wait_synced(kDeadline));
  constexpr int kThreads = 4;
  constexpr int kEach = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        client.set("t" + std::to_string(t) + "/" + std::to_string(i), "v");
        (void)client.get("t0/0");
        (void)client.snapshot_map();
      }
    });
  }
  for (auto& th : threads) th.join();
  BOOST_CHECK(client.wait_for([&] { return client.snapshot_map().size() == kThreads * kEach; }, kDeadline));
  BOOST_CHECK_EQUAL(client.sequence(), static_cast<std::uint64_t>(kThreads * kEach));
}

BOOST_AUTO_TEST_CASE(destructor_returns_promptly_without_a_server) {
  const auto port = zstore::testing::free_port_range(3);
  const auto start = std::chrono::steady_clock::now();
  {
    CloneClient client(options_for({"tcp://127.0.0.1:" + std::to_string(port)}));
    (void)client.set("k", "v");
    BOOST_CHECK(!client.wait_synced(50ms));
  }
  BOOST_CHECK(std::chrono::steady_clock::now() - start < 5s);
}

BOOST_AUTO_TEST_CASE(unusable_options_and_keys_are_rejected) {
  for (const auto& servers : std::vector<std::vector<std::string>>{
           {},
           {"tcp://127.0.0.1:5556", "tcp://127.0.0.1:5566", "tcp://127.0.0.1:5576"},
           {"127.0.0.1:5556"},
           {"tcp://127.0.0.1"},
           {"tcp://:5556"},
           {"tcp://127.0.0.1:65534"},
           {"tcp://127.0.0.1:0"},
           {"tcp://127.0.0.1:55x"},
       }) {
    BOOST_CHECK_THROW(CloneClient{options_for(servers)}, std::invalid_argument);
  }
  Options no_failover = options_for({"tcp://127.0.0.1:5556"});
  no_failover.failover_timeout = 0ms;
  BOOST_CHECK_THROW(CloneClient{no_failover}, std::invalid_argument);

  CloneClient client(options_for({"tcp://127.0.0.1:" + std::to_string(zstore::testing::free_port_range(3))}));
  BOOST_CHECK_THROW(client.set("", "v"), std::invalid_argument);
  BOOST_CHECK_THROW(client.set("HUGZ", "v"), std::invalid_argument);
  BOOST_CHECK_THROW(client.erase("KTHXBAI"), std::invalid_argument);
  BOOST_CHECK_THROW(client.set("k", "v", chp::Limits{}.max_ttl_seconds + 1), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()

// No server takes writes (none listens at the address): past
// max_unsent_writes set() refuses with WriteQueueFull, and nothing queued
// is dropped (before, the agent dropped the oldest after set() returned).
BOOST_AUTO_TEST_CASE(writes_no_server_takes_are_refused_past_the_bound_never_dropped) {
  const auto port = zstore::testing::free_port_range(3);
  Options o;
  o.servers = {"tcp://127.0.0.1:" + std::to_string(port)};
  o.max_unsent_writes = 50;
  o.write_wait = 200ms;
  CloneClient client(o);
  for (int i = 0; i < 50; ++i) client.set("k" + std::to_string(i), "v");
  BOOST_CHECK_THROW(client.set("one-too-many", "v"), zstore::client::WriteQueueFull);
  BOOST_CHECK_THROW(client.erase("k0"), zstore::client::WriteQueueFull);
  BOOST_CHECK_EQUAL(client.stats().kvsets_dropped, 0u);
}
