// A key's history against a real zstored (client/key_history.h,
// protocol/chp_key_history.h, ChpStore::key_history): versions newest first
// with older values, deletes and expiries, the limit, malformed requests
// answered without harm, and zstore-cli chp history's output and exit codes.
#include "client/key_history.h"

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "client/confirmed_write.h"
#include "protocol/chp_key_history.h"
#include "tests/support/test_support.h"
#include "tests/support/zstored_fixtures.h"
#include "tools/harness/harness.h"
#include "transport/zmq_frames.h"

namespace chp = zstore::protocol::chp;
using zstore::client::KeyHistory;
using State = chp::KeyVersion::State;
using namespace std::chrono_literals;

namespace {

// A zstored with per-key history (off by default: --chp-key-history).
struct Fixture {
  zstore::testing::ZstoredServer server;
  zstore::testing::TempDir dir;
  int runs = 0;

  explicit Fixture(std::vector<std::string> flags = {"--chp-key-history"}) : server(std::move(flags)) {}

  zstore::client::Options options() const {
    zstore::client::Options o;
    o.servers = {server.zstored.chp_endpoint()};
    return o;
  }
  std::uint64_t write(const std::string& key, const std::string& value, std::uint64_t ttl = 0) {
    auto w = zstore::client::confirmed_write(options(), key, value, ttl, {}, zstore::testing::scaled(10s));
    BOOST_REQUIRE_EQUAL(zstore::client::to_string(w.result), "applied");
    return w.sequence;
  }
  KeyHistory history(const std::string& key, std::uint64_t limit = 64) {
    return zstore::client::key_history(options(), key, limit, zstore::testing::scaled(10s));
  }
  // A raw request on the snapshot port: the reply's frames, or empty on time-out.
  std::vector<std::string> ask_raw(const zstore::protocol::Frames& request) {
    zmq::socket_t dealer(server.ctx, zmq::socket_type::dealer);
    dealer.set(zmq::sockopt::linger, 0);
    dealer.connect(server.zstored.chp_endpoint());
    zstore::transport::send(dealer, request);
    zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, zstore::testing::scaled(5s)) == 0) return {};
    zstore::transport::Message msg;
    BOOST_REQUIRE(zstore::transport::try_recv(dealer, &msg));
    return std::vector<std::string>(msg.views.begin(), msg.views.end());
  }
  struct Run {
    int code = -1;
    std::string output;
  };
  Run cli(std::vector<std::string> args) {
    std::vector<std::string> all{"chp", "-s", server.zstored.chp_endpoint(), "--timeout-ms", "10000"};
    all.insert(all.end(), args.begin(), args.end());
    zstore::testing::Process p(zstore::testing::bin_path("zstore-cli"), all,
                               dir.str() + "/cli-" + std::to_string(++runs) + ".log");
    Run r;
    r.code = p.wait(20s);
    r.output = p.log();
    return r;
  }
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A zstored on its defaults: no per-key history.
struct WithoutKeyHistory : Fixture {
  WithoutKeyHistory() : Fixture(std::vector<std::string>{}) {}
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(key_history, Fixture)

BOOST_AUTO_TEST_CASE(five_sets_and_a_delete_come_back_newest_first_with_their_values) {
  std::vector<std::uint64_t> seqs;
  for (int i = 1; i <= 5; ++i) {
    seqs.push_back(write("/h/k", "v" + std::to_string(i)));
    write("/h/other", "x" + std::to_string(i));
  }
  seqs.push_back(write("/h/k", ""));
  auto got = history("/h/k");
  BOOST_REQUIRE_EQUAL(zstore::client::to_string(got.result), "ok");
  BOOST_REQUIRE_EQUAL(got.versions.size(), 6u);
  BOOST_TEST((got.versions[0].state == State::kDeleted));
  BOOST_TEST(got.versions[0].body.empty());
  for (std::size_t i = 0; i < 6; ++i) {
    BOOST_TEST(got.versions[i].sequence == seqs[5 - i]);
    BOOST_TEST(got.versions[i].key == "/h/k");
    BOOST_TEST(got.versions[i].written_ms > 0u);
    if (i > 0) {
      BOOST_TEST((got.versions[i].state == State::kSet));
      BOOST_TEST(got.versions[i].body == "v" + std::to_string(6 - i));
    }
  }
  auto two = history("/h/k", 2);
  BOOST_REQUIRE_EQUAL(two.versions.size(), 2u);
  BOOST_TEST(two.versions[1].body == "v5");
  auto none = history("/h/never");
  BOOST_REQUIRE_EQUAL(zstore::client::to_string(none.result), "ok");
  BOOST_TEST(none.versions.empty());
}

BOOST_AUTO_TEST_CASE(an_expired_key_shows_its_expiry) {
  write("/h/lease", "holder", 1);
  BOOST_TEST(zstore::testing::wait_until(
      [&] {
        auto got = history("/h/lease");
        return got.versions.size() == 2u && got.versions[0].state == State::kExpired;
      },
      10s));
  auto got = history("/h/lease");
  BOOST_REQUIRE_EQUAL(got.versions.size(), 2u);
  BOOST_TEST(got.versions[1].body == "holder");
  BOOST_TEST(got.versions[1].expires_at_ms > 0u);
}

BOOST_AUTO_TEST_CASE(malformed_requests_are_answered_failed_and_the_server_goes_on) {
  write("/h/m", "1");
  for (const auto& bad : std::vector<zstore::protocol::Frames>{
           {"HISTORY?", "", chp::encode_sequence(5)},
           {"HISTORY?", "/h/m", chp::encode_sequence(0)},
           {"HISTORY?", "/h/m", chp::encode_sequence(1001)},
           {"HISTORY?", "/h/m", "short"},
           {"HISTORY?", "/h/m"},
           {"HISTORY?", "/h/m", chp::encode_sequence(5), "extra"},
       }) {
    auto reply = ask_raw(bad);
    BOOST_REQUIRE_EQUAL(reply.size(), 5u);
    BOOST_TEST(reply[0] == "HISTORYEND");
    BOOST_TEST(reply[2] == "failed");
    BOOST_TEST(contains(reply[4], "malformed"), reply[4]);
  }
  auto reply = ask_raw({"HISTORY?", "/h/m", chp::encode_sequence(5)});
  BOOST_REQUIRE_EQUAL(reply.size(), 8u);
  BOOST_TEST(reply[0] == "KVHIST");
  BOOST_TEST(reply[7] == "1");
  BOOST_TEST(server.zstored.process()->running());
}

BOOST_AUTO_TEST_CASE(the_cli_prints_versions_newest_first_and_exits_5_without_history) {
  auto s1 = write("/h/c", "one");
  auto s2 = write("/h/c", "two");
  auto s3 = write("/h/c", "");
  auto r = cli({"history", "/h/c"});
  BOOST_REQUIRE_MESSAGE(r.code == 0, r.output);
  auto first = r.output.find(std::to_string(s3) + " ");
  auto second = r.output.find(std::to_string(s2) + " ");
  auto third = r.output.find(std::to_string(s1) + " ");
  BOOST_TEST((first != std::string::npos && first < second && second < third && third != std::string::npos), r.output);
  BOOST_TEST(contains(r.output, "(deleted)\n"), r.output);
  BOOST_TEST(contains(r.output, "Z two\n"), r.output);  // SEQ TIME VALUE, TIME in UTC
  BOOST_TEST(contains(r.output, "Z one\n"), r.output);
  auto limited = cli({"history", "/h/c", "--limit", "1"});
  BOOST_TEST(limited.code == 0);
  BOOST_TEST(!contains(limited.output, "two"), limited.output);
  auto none = cli({"history", "/h/none"});
  BOOST_TEST(none.code == 5, none.output);
  BOOST_TEST(contains(none.output, "no history"), none.output);
  BOOST_TEST(cli({"history", "/h/c", "--limit", "1001"}).code == 2);
  BOOST_TEST(cli({"history", "/h/c", "--limit", "0"}).code == 2);
  BOOST_TEST(cli({"history"}).code == 2);
  BOOST_TEST(cli({"get", "/h/c", "--limit", "3"}).code == 2);
}

BOOST_AUTO_TEST_SUITE_END()

// Without --chp-key-history zstored does not announce key-history=1: the
// client says unsupported, the CLI exits 1 naming the flag, and a HISTORY?
// sent anyway is answered HISTORYEND failed, unsupported.
BOOST_FIXTURE_TEST_CASE(a_zstored_without_the_flag_keeps_no_history_and_says_so, WithoutKeyHistory) {
  write("/h/k", "one");
  write("/h/k", "two");
  auto got = history("/h/k");
  BOOST_TEST(zstore::client::to_string(got.result) == std::string("unsupported"));
  BOOST_TEST(got.versions.empty());
  auto r = cli({"history", "/h/k"});
  BOOST_TEST(r.code == 1, r.output);
  BOOST_TEST(contains(r.output, "keeps no per-key history; start zstored with --chp-key-history"), r.output);
  auto reply = ask_raw({"HISTORY?", "/h/k", chp::encode_sequence(5)});
  BOOST_REQUIRE_EQUAL(reply.size(), 5u);
  BOOST_TEST(reply[0] == "HISTORYEND");
  BOOST_TEST(reply[2] == "failed");
  BOOST_TEST(contains(reply[4], "unsupported"), reply[4]);
  BOOST_TEST(server.zstored.process()->running());
}
