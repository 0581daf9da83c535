// zstore-cli chp against a scripted fake CHP server: exit codes, output
// formats, and that set/del wait for their own KVPUB.
#include <signal.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "protocol/chp_codec.h"
#include "tests/client/fake_chp_server.h"
#include "tests/support/test_support.h"

namespace chp = zstore::protocol::chp;
using zstore::testing::FakeChpServer;
using zstore::testing::Process;
using zstore::testing::TempDir;
using zstore::testing::wait_until;
using namespace std::chrono_literals;

namespace {

struct Run {
  int code = -1;
  std::string output;  // stdout and stderr together
};

struct Fixture {
  zmq::context_t ctx;
  TempDir dir;
  int runs = 0;

  std::string log_path() { return dir.str() + "/cli-" + std::to_string(++runs) + ".log"; }

  std::unique_ptr<Process> start(std::vector<std::string> args) {
    return std::make_unique<Process>(zstore::testing::bin_path("zstore-cli"), std::move(args), log_path());
  }

  Run run(std::vector<std::string> args) {
    auto p = start(std::move(args));
    Run r;
    r.code = p->wait(20s);
    r.output = p->log();
    return r;
  }

  // "chp -s ENDPOINT --timeout-ms 5000 ARGS..."
  Run chp(const FakeChpServer& server, std::vector<std::string> args) {
    std::vector<std::string> all{"chp", "-s", server.endpoint(), "--timeout-ms", "5000"};
    all.insert(all.end(), args.begin(), args.end());
    return run(std::move(all));
  }
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

BOOST_FIXTURE_TEST_SUITE(cli, Fixture)

BOOST_AUTO_TEST_CASE(help_is_available_at_every_level) {
  Run top = run({"--help"});
  BOOST_CHECK_EQUAL(top.code, 0);
  BOOST_CHECK(contains(top.output, "chp"));
  Run family = run({"chp", "--help"});
  BOOST_CHECK_EQUAL(family.code, 0);
  BOOST_CHECK(contains(family.output, "zstore-cli chp [options] watch"));
  BOOST_CHECK_EQUAL(run({"chp", "set", "--help"}).code, 0);
}

BOOST_AUTO_TEST_CASE(usage_errors_exit_2_with_a_message) {
  const std::vector<std::vector<std::string>> bad{
      {},
      {"nosuchfamily"},
      {"chp"},
      {"chp", "frobnicate"},
      {"chp", "get"},
      {"chp", "get", "a", "b"},
      {"chp", "set", "k"},
      {"chp", "set", "k", ""},
      {"chp", "set", "HUGZ", "v"},
      {"chp", "del", "KTHXBAI"},
      {"chp", "--bogus", "get", "k"},
      {"chp", "get", "k", "--ttl", "5"},
      {"chp", "set", "k", "v", "--ttl", "soon"},
      {"chp", "set", "k", "v", "--if-seq", "x"},
      {"chp", "set", "k", "v", "--if-seq", "1", "--if-absent"},
      {"chp", "del", "k", "--if-absent"},
      {"chp", "get", "k", "--if-seq", "1"},
      {"chp", "set", "k", "v", "--with-seq"},
      {"chp", "watch", "--count", "0"},
      {"chp", "get", "k", "--timeout-ms", "-5"},
      {"chp", "get", "k", "-s", "localhost:5556"},
      {"chp", "get", "k", "-s", "tcp://a:1", "-s", "tcp://b:1", "-s", "tcp://c:1"},
  };
  for (const auto& args : bad) {
    Run r = run(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    BOOST_TEST_CONTEXT("zstore-cli " << joined) {
      BOOST_CHECK_EQUAL(r.code, 2);
      BOOST_CHECK(!r.output.empty());
    }
  }
}

BOOST_AUTO_TEST_CASE(get_prints_the_value_or_exits_3_when_absent) {
  FakeChpServer server(ctx);
  server.reset_map({{"greeting", "hello world"}}, 1);
  Run found = chp(server, {"get", "greeting"});
  BOOST_CHECK_EQUAL(found.code, 0);
  BOOST_CHECK_EQUAL(found.output, "hello world\n");

  Run missing = chp(server, {"get", "nothing"});
  BOOST_CHECK_EQUAL(missing.code, 3);  // not 1: a server answered
  BOOST_CHECK(contains(missing.output, "key not found: nothing"));
}

BOOST_AUTO_TEST_CASE(get_is_an_exact_key_lookup) {
  FakeChpServer server(ctx);
  server.set_heartbeat(false);  // get reads one snapshot: it needs no subscriber
  server.reset_map({{"/a/b", "one"}, {"/a/bc", "two"}, {"/a/b/c", "three"}}, 3);
  Run b = chp(server, {"get", "/a/b"});
  BOOST_CHECK_EQUAL(b.code, 0);
  BOOST_CHECK_EQUAL(b.output, "one\n");
  for (const std::string key : {"/a/", "/a"}) {  // each only a prefix of the keys
    Run prefix = chp(server, {"get", key});
    BOOST_CHECK_EQUAL(prefix.code, 3);
    BOOST_CHECK(contains(prefix.output, "key not found: " + key));
    BOOST_CHECK(!contains(prefix.output, "one") && !contains(prefix.output, "two"));
  }
  BOOST_CHECK((server.request_subtrees() == std::vector<std::string>{"/a/b", "/a/", "/a"}));
}

BOOST_AUTO_TEST_CASE(no_server_exits_1_after_the_timeout) {
  const auto port = zstore::testing::free_port_range(3);
  Run r = run({"chp", "-s", "tcp://127.0.0.1:" + std::to_string(port), "--timeout-ms", "300", "get", "k"});
  BOOST_CHECK_EQUAL(r.code, 1);
  BOOST_CHECK(contains(r.output, "no CHP server answered"));
}

BOOST_AUTO_TEST_CASE(set_exits_0_once_published_and_sends_ttl) {
  FakeChpServer server(ctx);
  Run r = chp(server, {"set", "k", "v1", "--ttl", "30"});
  BOOST_CHECK_EQUAL(r.code, 0);
  BOOST_CHECK_EQUAL(r.output, "");
  auto kvsets = server.kvsets();
  BOOST_REQUIRE_EQUAL(kvsets.size(), 1u);
  BOOST_CHECK_EQUAL(kvsets[0][0], "k");
  BOOST_CHECK_EQUAL(kvsets[0][3], "ttl=30\n");
  BOOST_CHECK_EQUAL(kvsets[0][4], "v1");
  BOOST_CHECK_EQUAL(chp(server, {"get", "k"}).output, "v1\n");

  Run del = chp(server, {"del", "k"});
  BOOST_CHECK_EQUAL(del.code, 0);
  BOOST_CHECK_EQUAL(chp(server, {"get", "k"}).code, 3);
}

// The fake, like the Guide's servers, announces no writes=1: a plain set
// still works (KVSET, then its KVPUB); a conditional one is never sent as
// an unconditional KVSET.
BOOST_AUTO_TEST_CASE(a_conditional_write_to_a_server_without_write_requests_fails_unsent) {
  FakeChpServer server(ctx);
  Run r = chp(server, {"set", "k", "v", "--if-seq", "1"});
  BOOST_CHECK_EQUAL(r.code, 1);
  BOOST_CHECK(contains(r.output, "does not take conditional writes"));
  Run absent = chp(server, {"set", "k", "v", "--if-absent"});
  BOOST_CHECK_EQUAL(absent.code, 1);
  BOOST_CHECK(server.kvsets().empty());
  BOOST_CHECK_EQUAL(chp(server, {"set", "k", "v"}).code, 0);
  BOOST_CHECK_EQUAL(server.kvsets().size(), 1u);
}

// Nor key-history=1: history fails with a clear error, and the only
// request the fake sees is the empty snapshot that asked what it announces.
BOOST_AUTO_TEST_CASE(history_from_a_server_without_key_history_fails_clearly) {
  FakeChpServer server(ctx);
  server.store("k", "v");
  Run r = chp(server, {"history", "k"});
  BOOST_CHECK_EQUAL(r.code, 1);
  BOOST_CHECK_MESSAGE(contains(r.output, "does not serve per-key history"), r.output);
  BOOST_CHECK_MESSAGE(contains(r.output, "start zstored with --chp-key-history"), r.output);  // what to do about it
  BOOST_CHECK_EQUAL(server.requests(), 1);
  BOOST_CHECK_EQUAL(chp(server, {"history", "k", "--limit", "1001"}).code, 2);
  BOOST_CHECK_EQUAL(chp(server, {"history", "k", "--limit", "x"}).code, 2);
  BOOST_CHECK_EQUAL(chp(server, {"snapshot", "--limit", "2"}).code, 2);
}

BOOST_AUTO_TEST_CASE(set_not_published_exits_1) {
  FakeChpServer server(ctx);
  server.set_echo(false);  // receives, never publishes
  // 2 s for the sync, then 2 s for the confirmation that never comes.
  Run r = run({"chp", "-s", server.endpoint(), "--timeout-ms", "2000", "set", "k", "v"});
  BOOST_CHECK_EQUAL(r.code, 1);
  BOOST_CHECK(contains(r.output, "not confirmed"));
  BOOST_CHECK(wait_until([&] { return server.kvsets().size() == 1; }, 5s));
}

BOOST_AUTO_TEST_CASE(snapshot_prints_sorted_keys_and_escapes_binary) {
  FakeChpServer server(ctx);
  server.set_heartbeat(false);  // snapshot reads one snapshot: it answers without a HUGZ
  server.reset_map({{"b", "2"}, {"a", "1"}, {"/x/bin", std::string("\x01z\n", 3)}, {"/x/utf", "h\xc3\xa9llo"}}, 4);
  Run all = chp(server, {"snapshot"});
  BOOST_CHECK_EQUAL(all.code, 0);
  BOOST_CHECK_EQUAL(all.output, "/x/bin \\x01z\\n\n/x/utf h\xc3\xa9llo\na 1\nb 2\n");

  Run sub = chp(server, {"snapshot", "--subtree", "/x/"});
  BOOST_CHECK_EQUAL(sub.code, 0);
  BOOST_CHECK_EQUAL(sub.output, "/x/bin \\x01z\\n\n/x/utf h\xc3\xa9llo\n");
}

BOOST_AUTO_TEST_CASE(watch_prints_each_update_and_exits_after_count) {
  FakeChpServer server(ctx);
  server.reset_map({{"old", "x"}}, 7);
  auto watch = start({"chp", "-s", server.endpoint(), "watch", "--count", "3"});
  BOOST_REQUIRE(wait_until([&] { return contains(watch->log(), "from sequence 7"); }, 10s));
  server.store("k", "v");
  server.store("/other", std::string("a\tb"));
  server.store("k", "");
  BOOST_REQUIRE_EQUAL(watch->wait(10s), 0);
  const std::string out = watch->log();
  BOOST_CHECK(contains(out, "8 k v\n9 /other a\\tb\n10 k (deleted)\n"));
  BOOST_CHECK(!contains(out, "old"));
}

BOOST_AUTO_TEST_CASE(watch_stops_cleanly_on_sigterm_and_sigint) {
  FakeChpServer server(ctx);
  for (int signo : {SIGTERM, SIGINT}) {
    auto watch = start({"chp", "-s", server.endpoint(), "watch", "--subtree", "/a/"});
    BOOST_REQUIRE(wait_until([&] { return contains(watch->log(), "watching '/a/'"); }, 10s));
    server.store("/a/1", "one");
    server.store("/b/1", "filtered");
    BOOST_REQUIRE(wait_until([&] { return contains(watch->log(), " /a/1 one\n"); }, 10s));
    watch->kill(signo);
    BOOST_CHECK_EQUAL(watch->wait(10s), 0);
    BOOST_CHECK(!contains(watch->log(), "filtered"));
  }
}

// keygen, admin, chp and dafka report a bad command line the same way:
// exit 2, "zstore-cli FAMILY: MESSAGE", then where the help is.
BOOST_AUTO_TEST_CASE(every_family_reports_usage_errors_the_same_way) {
  const std::vector<std::vector<std::string>> bad{
      {"keygen"},
      {"keygen", "a", "b"},
      {"keygen", ".hidden"},
      {"keygen", "--bogus", "name"},
      {"admin"},
      {"admin", "frobnicate"},
      {"admin", "--timeout-ms", "x", "health"},
      {"admin", "--bogus", "health"},
      {"chp", "frobnicate"},
      {"dafka", "frobnicate", "t"},
  };
  for (const auto& args : bad) {
    Run r = run(args);
    const std::string family = args[0];
    BOOST_TEST_CONTEXT("zstore-cli " << family << " ... (" << args.size() << " words)") {
      BOOST_CHECK_EQUAL(r.code, 2);
      BOOST_CHECK_MESSAGE(r.output.starts_with("zstore-cli " + family + ": "), r.output);
      BOOST_CHECK_MESSAGE(contains(r.output, "Try 'zstore-cli " + family + " --help'."), r.output);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
