// The concurrent counter through a Binary Star failover (issue 54): 8
// clients each loop get -> conditional set of value+1 on one key while the
// active is SIGKILLed mid-run, at a moment its passive lags behind (stopped
// while a bulk writer streams large values through the active, so the tail
// of the active's stream is still inside it when it dies). At the end the
// counter equals the number of increments reported applied, and the values
// the applied increments wrote are exactly 1..N: none lost, none applied
// twice. Unknown outcomes are counted and each resolved by retrying the same
// write (same UUID), which the servers apply at most once.
// The active answers "applied" only once the passive stored the write
// (server/chp/chp_write_acks.h); without that, increments answered applied are
// missing on the new active and two applied increments write one value.
#include <signal.h>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <iostream>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "client/clone_client.h"
#include "protocol/chp_writes.h"
#include "tests/support/zstored_fixtures.h"
#include "tools/harness/chp_peer.h"
#include "tools/harness/harness.h"
#include "transport/zmq_frames.h"

using namespace std::chrono_literals;
using zstore::client::CloneClient;
using zstore::client::WriteOptions;
using zstore::client::WriteOutcome;
using zstore::testing::wait_until;
using zstore::testing::Zstored;
using Kind = WriteOutcome::Kind;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kKey = "/counter";

struct Tally {
  std::mutex mu;
  std::map<long, int> written;  // value an applied increment wrote -> how many did
  long applied = 0, refused = 0, unknown = 0, unknown_applied = 0, unknown_refused = 0, failed = 0;
  std::vector<std::string> errors;
};

std::size_t count(const std::string& log, const std::string& what) {
  std::size_t n = 0;
  for (auto at = log.find(what); at != std::string::npos; at = log.find(what, at + 1)) ++n;
  return n;
}

// One client's loop until stop_at; every write's outcome ends known.
void increment(const std::vector<std::string>& servers, Clock::time_point stop_at, Tally& tally) {
  zstore::client::Options o;
  o.servers = servers;
  o.failover_timeout = 1000ms;
  o.snapshot_retry_max = 500ms;
  o.subtree = kKey;  // not the bulk writer's keys
  CloneClient client(o);
  if (!client.wait_synced(zstore::testing::scaled(20s))) {
    std::lock_guard lock(tally.mu);
    tally.errors.push_back("a client never synced");
    return;
  }
  while (Clock::now() < stop_at) {
    auto seen = client.get_with_sequence(kKey);
    if (!seen) {
      client.wait_for([&] { return client.get_with_sequence(kKey).has_value(); }, 1s);
      continue;
    }
    long next = std::stol(seen->first) + 1;
    auto write = client.write(kKey, std::to_string(next), WriteOptions::if_sequence(seen->second));
    auto outcome = write.wait_for(3s);
    bool was_unknown = outcome.kind == Kind::kUnknown;
    // An unknown outcome (the active died, the client is failing over) is
    // resolved by the same write again: the first outcome, or its only application.
    auto resolve_by = Clock::now() + zstore::testing::scaled(30s);
    while (outcome.kind == Kind::kUnknown && Clock::now() < resolve_by) outcome = client.retry(write).wait_for(3s);
    {
      std::lock_guard lock(tally.mu);
      if (was_unknown) ++tally.unknown;
      switch (outcome.kind) {
        case Kind::kApplied:
          ++tally.applied;
          ++tally.written[next];
          if (was_unknown) ++tally.unknown_applied;
          break;
        case Kind::kRefused:
          ++tally.refused;
          if (was_unknown) ++tally.unknown_refused;
          break;
        case Kind::kFailed:
          ++tally.failed;
          tally.errors.push_back("failed: " + outcome.detail);
          break;
        case Kind::kUnknown:
          tally.errors.push_back("an outcome stayed unknown for 30 s");
          break;
      }
    }
    if (outcome.kind == Kind::kRefused) {  // read the winner's value before trying again
      client.wait_for(
          [&] {
            auto now = client.get_with_sequence(kKey);
            return now && now->second >= outcome.sequence;
          },
          1s);
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(counter_loses_no_applied_increment_through_a_failover) {
  zmq::context_t ctx;
  Zstored primary, backup;
  // 1 s heartbeats: the active holds an answer up to 2 s for its passive,
  // longer than the passive is stopped below.
  zstore::testing::make_ha_pair(primary, backup, {"--ha-heartbeat-ms", "1000", "--hugz-interval-ms", "200"});
  BOOST_REQUIRE_MESSAGE(primary.start(), primary.log());
  BOOST_REQUIRE_MESSAGE(backup.start(), backup.log());
  BOOST_REQUIRE(zstore::testing::snapshot_from(ctx, primary, 10s));
  BOOST_REQUIRE(wait_until([&] { return backup.ha_follower_synced(); }, 20s));
  const std::vector<std::string> servers{primary.chp_endpoint(), backup.chp_endpoint()};
  {
    zstore::client::Options o;
    o.servers = servers;
    CloneClient setup(o);
    BOOST_REQUIRE(setup.wait_synced(10s));
    BOOST_REQUIRE_EQUAL(to_string(setup.write(kKey, "0").wait_for(10s).kind), "applied");
  }

  Tally tally;
  const auto start = Clock::now();
  const auto stop_at = start + 30s;  // 30 s of increments, the failover inside them
  std::vector<std::thread> clients;
  for (int i = 0; i < 8; ++i) clients.emplace_back([&] { increment(servers, stop_at, tally); });

  // Mid-run: the passive lags (stopped, the active's stream piling up in
  // front of it), then the active dies.
  std::this_thread::sleep_until(start + 5s);  // the scenario's timeline (clients increment throughout), not a wait
  const long applied_before = [&] {
    std::lock_guard l(tally.mu);
    return tally.applied;
  }();
  backup.kill(SIGSTOP);
  {
    zstore::testing::ChpPeer bulk(ctx, "tcp://127.0.0.1", primary.chp_port());
    if (bulk.wait_connected()) {
      const std::string big(8192, 'x');
      for (int n = 0, until_ok = 1; until_ok; ++n) {
        bulk.set("/bulk/" + std::to_string(n % 64), big);
        until_ok = Clock::now() < start + 5s + 1200ms;
      }
    }
    primary.kill(SIGKILL);
  }
  backup.kill(SIGCONT);
  primary.wait_exit();
  // The old active returns (as passive, handing over what only it had).
  std::this_thread::sleep_until(start + 11s);  // the scenario's timeline, not a wait
  const std::size_t synced_before = count(primary.log(), "HA follower: synced");
  BOOST_REQUIRE(primary.restart());
  BOOST_CHECK(wait_until([&] { return count(primary.log(), "HA follower: synced") > synced_before; }, 20s));
  for (auto& t : clients) t.join();

  // The final value, from whichever member is active now.
  zstore::client::Options o;
  o.servers = servers;
  CloneClient reader(o);
  BOOST_REQUIRE(reader.wait_synced(zstore::testing::scaled(20s)));
  auto final_value = reader.get_with_sequence(kKey);
  BOOST_REQUIRE(final_value);
  const long value = std::stol(final_value->first);

  std::lock_guard lock(tally.mu);
  long twice = 0, missing = 0;
  for (long v = 1; v <= value; ++v) missing += tally.written.count(v) == 0 ? 1 : 0;
  for (const auto& [v, n] : tally.written) twice += n > 1 ? n - 1 : 0;
  BOOST_TEST_MESSAGE("counter: applied " << tally.applied << " (" << applied_before << " before the kill), refused "
                                         << tally.refused << ", unknown " << tally.unknown << " (resolved: "
                                         << tally.unknown_applied << " applied, " << tally.unknown_refused
                                         << " refused), failed " << tally.failed << "; final value " << value
                                         << "; values written twice " << twice << ", values never written " << missing);
  std::cout << "counter: applied " << tally.applied << " (" << applied_before << " before the kill), refused "
            << tally.refused << ", unknown " << tally.unknown << " (resolved: " << tally.unknown_applied << " applied, "
            << tally.unknown_refused << " refused), failed " << tally.failed << "; final value " << value
            << "; values written twice " << twice << ", values never written " << missing << std::endl;
  for (const auto& e : tally.errors) BOOST_ERROR(e);
  BOOST_CHECK_GT(tally.applied - applied_before, 0);  // increments went on after the failover
  BOOST_CHECK_EQUAL(value, tally.applied);
  BOOST_CHECK_EQUAL(twice, 0);
  BOOST_CHECK_EQUAL(missing, 0);
}

namespace {

namespace chp = zstore::protocol::chp;

// One WRITE? of key with uuid to server, on a connection of its own; the
// answer, or none within 2 s (the server was not listening, or voting).
std::optional<chp::WriteOutcome> ask_write(const Zstored& server, const std::string& key, const std::string& uuid,
                                           const std::string& value, chp::Precondition pre) {
  zmq::context_t ctx;
  zmq::socket_t dealer(ctx, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.connect(server.chp_endpoint());
  zstore::transport::send(dealer, chp::encode_write(key, uuid, "", value, pre));
  zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
  zstore::transport::Message msg;
  if (zmq::poll(&item, 1, 2000ms) != 1 || !zstore::transport::try_recv(dealer, &msg)) return std::nullopt;
  auto outcome = chp::decode_written(msg.views);
  if (!outcome.ok()) return std::nullopt;
  return *outcome;
}

}  // namespace

// The passive stores each update's uuid with it (storage/chp/chp_outcomes.h):
// restarted, it still knows that a write it stored from the active was
// applied, so after a failover a retry of that write, overwritten since, is
// answered applied at its sequence, not refused against the newer value.
BOOST_AUTO_TEST_CASE(a_restarted_passive_answers_a_retry_after_the_failover_applied) {
  zstore::testing::HaPair pair;
  pair.wait_active_and_synced();
  const std::string uuid(16, 'p');
  const chp::Precondition absent{chp::Precondition::Kind::kAbsent, 0};
  auto first = ask_write(pair.primary, "/c/retry", uuid, "mine", absent);
  BOOST_REQUIRE(first && first->kind == chp::WriteOutcome::Kind::kApplied);  // the backup stored it: acknowledged
  auto next = ask_write(pair.primary, "/c/retry", std::string(16, 'q'), "theirs",
                        {chp::Precondition::Kind::kSequence, first->sequence});
  BOOST_REQUIRE(next && next->kind == chp::WriteOutcome::Kind::kApplied);
  pair.backup.kill(SIGKILL);
  BOOST_REQUIRE(pair.backup.restart());
  BOOST_REQUIRE_MESSAGE(wait_until([&] { return count(pair.backup.log(), "HA: following the active") >= 2; }, 20s),
                        "the restarted backup did not follow again: " + pair.backup.log());
  pair.primary.kill(SIGKILL);
  BOOST_REQUIRE_MESSAGE(pair.snapshot_from(pair.backup, 20s), "the backup did not take over");  // a client's vote
  std::optional<chp::WriteOutcome> retry;
  BOOST_REQUIRE(wait_until(
      [&] {
        retry = ask_write(pair.backup, "/c/retry", uuid, "mine", absent);
        return retry && retry->kind != chp::WriteOutcome::Kind::kNotActive;
      },
      20s));
  BOOST_TEST(chp::to_string(retry->kind) == "applied");
  BOOST_TEST(retry->sequence == first->sequence);
}
