// CloneClient's confirmed and conditional writes (CloneClient::write,
// PendingWrite) against a real zstored: every write learns its outcome,
// preconditions are judged by the server, a retry of the same write is
// applied once, concurrent read-modify-writes lose no increment, and a
// server that does not announce writes=1 never receives a conditional write.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "client/clone_client.h"
#include "tests/client/fake_chp_server.h"
#include "tests/support/zstored_fixtures.h"
#include "tools/harness/harness.h"

using namespace std::chrono_literals;
using zstore::client::CloneClient;
using zstore::client::WriteOptions;
using Kind = zstore::client::WriteOutcome::Kind;

namespace {

zstore::client::Options options(const std::string& server) {
  zstore::client::Options o;
  o.servers = {server};
  o.failover_timeout = 2s;
  return o;
}

struct Fixture {
  zstore::testing::ZstoredServer server;
  CloneClient client{options(server.zstored.chp_endpoint())};
  Fixture() { BOOST_REQUIRE(client.wait_synced(zstore::testing::scaled(10s))); }
  zstore::client::WriteOutcome write(const std::string& key, const std::string& value, WriteOptions o = {}) {
    return client.write(key, value, o).wait_for(zstore::testing::scaled(10s));
  }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(clone_writes, Fixture)

BOOST_AUTO_TEST_CASE(a_confirmed_write_is_answered_with_the_sequence_the_map_shows) {
  auto set = write("/cw/a", "one");
  BOOST_REQUIRE_EQUAL(to_string(set.kind), "applied");
  BOOST_TEST(set.sequence > 0u);
  BOOST_REQUIRE(client.wait_for([&] { return client.get_with_sequence("/cw/a").has_value(); }, 5s));
  BOOST_TEST(client.get_with_sequence("/cw/a")->first == "one");
  BOOST_TEST(client.get_with_sequence("/cw/a")->second == set.sequence);
  auto del = client.write_erase("/cw/a").wait_for(10s);
  BOOST_REQUIRE_EQUAL(to_string(del.kind), "applied");
  BOOST_TEST(del.sequence > set.sequence);
  BOOST_TEST(client.wait_for([&] { return !client.get("/cw/a"); }, 5s));
}

BOOST_AUTO_TEST_CASE(if_seq_refuses_the_loser_with_the_winners_sequence) {
  auto first = write("/cw/b", "1");
  BOOST_REQUIRE_EQUAL(to_string(first.kind), "applied");
  auto winner = write("/cw/b", "2", WriteOptions::if_sequence(first.sequence));
  BOOST_REQUIRE_EQUAL(to_string(winner.kind), "applied");
  auto loser = write("/cw/b", "3", WriteOptions::if_sequence(first.sequence));
  BOOST_REQUIRE_EQUAL(to_string(loser.kind), "refused");
  BOOST_TEST(loser.sequence == winner.sequence);
  auto on_absent = write("/cw/none", "x", WriteOptions::if_sequence(first.sequence));
  BOOST_REQUIRE_EQUAL(to_string(on_absent.kind), "refused");
  BOOST_TEST(on_absent.sequence == 0u);
  auto stale_erase = client.write_erase("/cw/b", WriteOptions::if_sequence(first.sequence)).wait_for(10s);
  BOOST_REQUIRE_EQUAL(to_string(stale_erase.kind), "refused");
  auto erase = client.write_erase("/cw/b", WriteOptions::if_sequence(winner.sequence)).wait_for(10s);
  BOOST_REQUIRE_EQUAL(to_string(erase.kind), "applied");
}

BOOST_AUTO_TEST_CASE(if_absent_applies_once_and_refuses_an_existing_key) {
  auto created = write("/cw/lock", "me", WriteOptions::if_absent());
  BOOST_REQUIRE_EQUAL(to_string(created.kind), "applied");
  auto again = write("/cw/lock", "you", WriteOptions::if_absent());
  BOOST_REQUIRE_EQUAL(to_string(again.kind), "refused");
  BOOST_TEST(again.sequence == created.sequence);
}

BOOST_AUTO_TEST_CASE(a_retry_with_the_same_uuid_is_applied_once) {
  auto first = client.write("/cw/r", "1", WriteOptions::if_absent());
  auto outcome = first.wait_for(10s);
  BOOST_REQUIRE_EQUAL(to_string(outcome.kind), "applied");
  auto retried = client.retry(first);
  BOOST_TEST(retried.uuid() == first.uuid());
  auto again = retried.wait_for(10s);
  BOOST_REQUIRE_EQUAL(to_string(again.kind), "applied");  // the first outcome, not a refusal of if-absent
  BOOST_TEST(again.sequence == outcome.sequence);
  auto next = write("/cw/other", "x");
  BOOST_TEST(next.sequence == outcome.sequence + 1);  // the retry took no sequence
}

BOOST_AUTO_TEST_CASE(concurrent_increments_lose_none) {
  BOOST_REQUIRE_EQUAL(to_string(write("/cw/n", "0").kind), "applied");
  constexpr int kClients = 4, kEach = 40;
  std::atomic<int> applied{0}, refused{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&] {
      CloneClient mine(options(server.zstored.chp_endpoint()));
      if (!mine.wait_synced(zstore::testing::scaled(10s))) return;
      for (int done = 0; done < kEach;) {
        auto seen = mine.get_with_sequence("/cw/n");
        if (!seen) continue;
        auto o =
            mine.write("/cw/n", std::to_string(std::stoi(seen->first) + 1), WriteOptions::if_sequence(seen->second))
                .wait_for(10s);
        if (o.kind == Kind::kApplied) {
          ++applied, ++done;
        } else if (o.kind == Kind::kRefused) {
          ++refused;
          mine.wait_for(
              [&] {
                auto now = mine.get_with_sequence("/cw/n");
                return now && now->second >= o.sequence;
              },
              5s);
        } else {
          return;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  BOOST_REQUIRE_EQUAL(applied.load(), kClients * kEach);
  BOOST_TEST(refused.load() > 0);
  BOOST_REQUIRE(client.wait_for([&] { return client.get("/cw/n") == std::to_string(kClients * kEach); }, 10s));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_CASE(a_server_without_writes_gets_no_conditional_write) {
  zmq::context_t ctx;
  zstore::testing::FakeChpServer fake(ctx);  // the reference servers' KTHXBAI: no writes=1
  CloneClient client(options(fake.endpoint()));
  BOOST_REQUIRE(client.wait_synced(zstore::testing::scaled(10s)));
  auto o = client.write("/cw/x", "1", WriteOptions::if_absent()).wait_for(10s);
  BOOST_REQUIRE_EQUAL(to_string(o.kind), "failed");
  BOOST_TEST(o.detail.find("writes=1") != std::string::npos);
  client.set("/cw/plain", "still works");
  BOOST_REQUIRE(zstore::testing::wait_until([&] { return fake.kvsets().size() == 1; }, 5s));
  BOOST_TEST(fake.kvsets()[0][0] == "/cw/plain");  // the conditional one was never sent as a KVSET
}
