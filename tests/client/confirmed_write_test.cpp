// Confirmed and conditional writes (client/confirmed_write.h against a real
// zstored, protocol/chp_writes.h): every write learns its outcome, a
// precondition decides atomically with the sequence, a retry is applied
// once, and concurrent read-modify-writes lose no increment.
#include "client/confirmed_write.h"

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "client/key_lookup.h"
#include "protocol/chp_writes.h"
#include "tests/support/test_support.h"
#include "tools/harness/harness.h"
#include "tests/support/zstored_fixtures.h"
#include "transport/zmq_frames.h"

namespace chp = zstore::protocol::chp;
using zstore::client::WriteResult;
using Pre = chp::Precondition;
using namespace std::chrono_literals;

namespace {

struct Fixture {
  zstore::testing::ZstoredServer server;
  zstore::client::Options options() const {
    zstore::client::Options o;
    o.servers = {server.zstored.chp_endpoint()};
    return o;
  }
  WriteResult write(const std::string& key, const std::string& value, Pre pre = {}, std::uint64_t ttl = 0) {
    return zstore::client::confirmed_write(options(), key, value, ttl, pre, zstore::testing::scaled(10s));
  }
  zstore::client::KeyLookup get(const std::string& key) {
    return zstore::client::lookup_key(options(), key, zstore::testing::scaled(10s));
  }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(confirmed_write, Fixture)

BOOST_AUTO_TEST_CASE(a_write_is_answered_with_its_sequence_and_published) {
  auto peer = server.peer();
  auto set = write("/w/a", "one");
  BOOST_REQUIRE_EQUAL(zstore::client::to_string(set.result), "applied");
  BOOST_TEST(set.sequence > 0u);
  auto kv = peer->wait_kvpub("/w/a", 5s);
  BOOST_REQUIRE(kv.has_value());
  BOOST_TEST(kv->sequence == set.sequence);
  BOOST_TEST(kv->uuid == set.uuid);
  BOOST_TEST(kv->properties.find("if-") == std::string::npos);
  auto got = get("/w/a");
  BOOST_TEST(got.value == "one");
  BOOST_TEST(got.sequence == set.sequence);
  auto del = write("/w/a", "");
  BOOST_REQUIRE_EQUAL(zstore::client::to_string(del.result), "applied");
  BOOST_TEST(del.sequence > set.sequence);
  BOOST_TEST((get("/w/a").result == zstore::client::KeyLookup::Result::kAbsent));
}

BOOST_AUTO_TEST_CASE(if_seq_applies_only_at_that_sequence) {
  auto first = write("/w/b", "1");
  auto winner = write("/w/b", "2", {Pre::Kind::kSequence, first.sequence});
  BOOST_REQUIRE_EQUAL(zstore::client::to_string(winner.result), "applied");
  auto loser = write("/w/b", "3", {Pre::Kind::kSequence, first.sequence});  // raced and lost
  BOOST_REQUIRE_EQUAL(zstore::client::to_string(loser.result), "refused");
  BOOST_TEST(loser.sequence == winner.sequence);  // the winner's, to read and retry from
  BOOST_TEST(get("/w/b").value == "2");
  auto absent = write("/w/none", "x", {Pre::Kind::kSequence, first.sequence});
  BOOST_REQUIRE_EQUAL(zstore::client::to_string(absent.result), "refused");
  BOOST_TEST(absent.sequence == 0u);
  auto del = write("/w/b", "", {Pre::Kind::kSequence, winner.sequence});
  BOOST_REQUIRE_EQUAL(zstore::client::to_string(del.result), "applied");
}

BOOST_AUTO_TEST_CASE(if_absent_applies_only_to_a_missing_or_expired_key) {
  auto made = write("/w/lock", "me", {Pre::Kind::kAbsent, 0}, 1);
  BOOST_REQUIRE_EQUAL(zstore::client::to_string(made.result), "applied");
  auto taken = write("/w/lock", "you", {Pre::Kind::kAbsent, 0});
  BOOST_REQUIRE_EQUAL(zstore::client::to_string(taken.result), "refused");
  BOOST_TEST(taken.sequence == made.sequence);
  // Its TTL lapses: the lock frees itself.
  BOOST_REQUIRE(zstore::testing::wait_until(
      [&] { return get("/w/lock").result == zstore::client::KeyLookup::Result::kAbsent; }, 10s));
  auto again = write("/w/lock", "you", {Pre::Kind::kAbsent, 0});
  BOOST_REQUIRE_EQUAL(zstore::client::to_string(again.result), "applied");
}

// The same WRITE? twice (a client that lost the first answer): one write,
// two identical answers.
BOOST_AUTO_TEST_CASE(a_retry_of_the_same_uuid_is_applied_once) {
  zmq::context_t ctx;
  zmq::socket_t dealer(ctx, zmq::socket_type::dealer);
  dealer.connect(server.zstored.chp_endpoint());
  const std::string uuid(16, 'r');
  auto ask = [&](const std::string& value) {
    zstore::transport::send(dealer, chp::encode_write("/w/retry", uuid, "", value, {}));
    zstore::transport::Message msg;
    zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
    BOOST_REQUIRE(zmq::poll(&item, 1, zstore::testing::scaled(10s)) == 1);
    BOOST_REQUIRE(zstore::transport::try_recv(dealer, &msg));
    auto outcome = chp::decode_written(msg.views);
    BOOST_REQUIRE(outcome.ok());
    return *outcome;
  };
  auto one = ask("v");
  auto two = ask("v");
  BOOST_TEST(chp::to_string(one.kind) == "applied");
  BOOST_TEST((two == one));
  write("/w/other", "x");  // moves the map on; the retry still finds its outcome
  BOOST_TEST((ask("v") == one));
  BOOST_TEST(get("/w/retry").sequence == one.sequence);
}

// A retry after a crash of an applied write that another write has since
// overwritten: the restarted server remembers its outcome (it is kept in
// the batch that applied it, storage/chp/chp_outcomes.h) and answers
// applied at its sequence, not refused against the newer value.
BOOST_AUTO_TEST_CASE(a_retry_after_a_crash_learns_its_write_was_applied) {
  const std::string uuid(16, 'k');
  auto ask = [&](const std::string& value) {
    zmq::context_t ctx;
    zmq::socket_t dealer(ctx, zmq::socket_type::dealer);
    dealer.set(zmq::sockopt::linger, 0);
    dealer.connect(server.zstored.chp_endpoint());
    zstore::transport::send(dealer, chp::encode_write("/w/crash", uuid, "", value, {Pre::Kind::kAbsent, 0}));
    zstore::transport::Message msg;
    zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
    BOOST_REQUIRE(zmq::poll(&item, 1, zstore::testing::scaled(10s)) == 1);
    BOOST_REQUIRE(zstore::transport::try_recv(dealer, &msg));
    auto outcome = chp::decode_written(msg.views);
    BOOST_REQUIRE(outcome.ok());
    return *outcome;
  };
  auto first = ask("mine");
  BOOST_REQUIRE_EQUAL(chp::to_string(first.kind), "applied");
  auto next = write("/w/crash", "theirs", {Pre::Kind::kSequence, first.sequence});
  BOOST_REQUIRE_EQUAL(zstore::client::to_string(next.result), "applied");
  server.zstored.kill(SIGKILL);
  BOOST_REQUIRE(server.zstored.restart());
  auto retry = ask("mine");
  BOOST_TEST(chp::to_string(retry.kind) == "applied");
  BOOST_TEST(retry.sequence == first.sequence);
  BOOST_TEST(get("/w/crash").value == "theirs");
}

// Jepsen's counter: writers each read the key and write value+1 only at
// the sequence they read. Every increment answered applied is in the final
// value, none twice.
BOOST_AUTO_TEST_CASE(concurrent_increments_lose_nothing) {
  constexpr int kWriters = 8;
  const auto until = std::chrono::steady_clock::now() + 3s;
  std::atomic<std::uint64_t> applied{0};
  std::atomic<std::uint64_t> refused{0};
  std::atomic<std::uint64_t> other{0};
  BOOST_REQUIRE_EQUAL(zstore::client::to_string(write("/w/counter", "0").result), "applied");
  std::vector<std::thread> writers;
  for (int i = 0; i < kWriters; ++i) {
    writers.emplace_back([&] {
      while (std::chrono::steady_clock::now() < until) {
        auto now = get("/w/counter");
        if (now.result != zstore::client::KeyLookup::Result::kFound) {
          ++other;
          continue;
        }
        auto next = std::to_string(std::stoull(now.value) + 1);
        auto r = write("/w/counter", next, {Pre::Kind::kSequence, now.sequence});
        if (r.result == WriteResult::Result::kApplied)
          ++applied;
        else if (r.result == WriteResult::Result::kRefused)
          ++refused;
        else
          ++other;
      }
    });
  }
  for (auto& t : writers) t.join();
  BOOST_TEST_MESSAGE("applied " << applied << ", refused " << refused << ", other " << other);
  BOOST_TEST(other.load() == 0u);
  BOOST_TEST(applied.load() > 0u);
  BOOST_TEST(refused.load() > 0u);  // they did race
  BOOST_TEST(get("/w/counter").value == std::to_string(applied.load()));
}

// zstore-cli chp: set and del print the sequence; a refused precondition
// exits 4 printing the key's current sequence; get --with-seq prints it.
BOOST_AUTO_TEST_CASE(the_cli_prints_outcomes_and_exits_4_on_a_refused_precondition) {
  zstore::testing::TempDir logs;
  int runs = 0;
  auto cli = [&](std::vector<std::string> args, std::string* out) {
    std::vector<std::string> all{"chp", "-s", server.zstored.chp_endpoint(), "--timeout-ms", "10000"};
    all.insert(all.end(), args.begin(), args.end());
    zstore::testing::Process p(zstore::testing::bin_path("zstore-cli"), all,
                               logs.str() + "/cli-" + std::to_string(++runs) + ".log");
    int code = p.wait(30s);
    *out = p.log();
    return code;
  };
  std::string out;
  BOOST_TEST(cli({"set", "/c/lock", "me", "--if-absent", "--ttl", "60"}, &out) == 0);
  const std::string seq = out.substr(0, out.find('\n'));
  BOOST_TEST(seq == std::to_string(get("/c/lock").sequence));
  BOOST_TEST(cli({"set", "/c/lock", "you", "--if-absent"}, &out) == 4);
  BOOST_TEST(out.find(seq + "\n") == 0u);
  BOOST_TEST(out.find("refused, the key is at sequence " + seq) != std::string::npos);
  BOOST_TEST(cli({"get", "/c/lock", "--with-seq"}, &out) == 0);
  BOOST_TEST(out == seq + " me\n");
  BOOST_TEST(cli({"set", "/c/lock", "me", "--if-seq", seq, "--ttl", "60"}, &out) == 0);  // a refresh
  const std::string refreshed = out.substr(0, out.find('\n'));
  BOOST_TEST(cli({"del", "/c/lock", "--if-seq", seq}, &out) == 4);  // the old holder's release is refused
  BOOST_TEST(cli({"del", "/c/lock", "--if-seq", refreshed}, &out) == 0);
  BOOST_TEST(cli({"get", "/c/lock"}, &out) == 3);
}

BOOST_AUTO_TEST_SUITE_END()
