// CHP access rules (--acl): the rule file's parser and, over real CURVE
// sockets against zstored, each case: a KVSET outside the sender's w
// prefixes is not applied, a snapshot holds only keys inside the
// requester's r prefixes, live updates outside them never reach a
// subscriber (HUGZ do), HA peer requests from clients are ignored; the
// denials are counted in /metrics, start-up refuses a bad rule file, and
// SIGHUP re-reads the file (a bad new file keeps the rules in force).
#include <signal.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <fstream>
#include <set>
#include <string>
#include <variant>

#include <zmq.hpp>

#include "client/key_history.h"
#include "server/access/chp_acl.h"
#include "tests/ops/ops_support.h"
#include "tests/support/curve_keys.h"
#include "tests/support/chp_peer.h"

namespace chp = zstore::protocol::chp;
using zstore::server::ChpAcl;
using namespace zstore::testing;
using namespace std::chrono_literals;

namespace {

constexpr const char* kRules =
    "# CHP rules\n"
    "alice rw /app/\n"
    "alice r /shared/\n"
    "bob r /app/public/\n"
    "bob w /bob/\n"
    "\n"
    "carol rw *\n";

ChpAcl rules() {
  std::string error;
  auto acl = ChpAcl::parse(kRules, &error);
  BOOST_REQUIRE_MESSAGE(acl, error);
  return *acl;
}

// zstored with CURVE, the rules above and HTTP metrics; carol may do anything.
struct Fixture {
  zmq::context_t ctx;
  CurveKeys keys{{"alice", "bob", "carol", "dave"}, {"alice", "bob", "carol", "dave"}};
  std::string acl_file = (keys.dir.path() / "acl").string();
  std::unique_ptr<HttpZstored> z;
  std::unique_ptr<ChpPeer> carol;

  Fixture() {
    // alice and bob may also use the test peer's probe key (wait_connected).
    std::ofstream(acl_file) << kRules << "alice rw __zstore_test_probe\nbob rw __zstore_test_probe\n";
    auto args = keys.server_args();
    args.insert(args.end(), {"--acl", acl_file, "--chp-key-history"});  // HISTORY? too
    z = std::make_unique<HttpZstored>(args);
    BOOST_REQUIRE_MESSAGE(z->server.start(), z->server.log());
    carol = peer("carol");
    BOOST_REQUIRE(carol->wait_connected());
  }
  std::unique_ptr<ChpPeer> peer(const std::string& name) {
    return std::make_unique<ChpPeer>(ctx, "tcp://127.0.0.1", z->server.chp_port(), keys.as(name));
  }
  // carol writes key and waits for its KVPUB.
  void put(const std::string& key, const std::string& value) {
    carol->set(key, value);
    BOOST_REQUIRE(carol->wait_kvpub(key, 5s));
  }
  std::set<std::string> keys_seen_by(const std::string& name, const std::string& subtree = "") {
    auto snap = peer(name)->snapshot(subtree, 5s);
    BOOST_REQUIRE(snap);
    std::set<std::string> out;
    for (const auto& [k, v] : snap->entries) {
      if (k != "__zstore_test_probe") out.insert(k);
    }
    return out;
  }
  // Occurrences of part in zstored's log.
  std::size_t log_count(const std::string& part) {
    std::string log = z->server.log();
    std::size_t n = 0;
    for (auto at = log.find(part); at != std::string::npos; at = log.find(part, at + 1)) ++n;
    return n;
  }
  // After the publisher dropped its subscribers: until reader's SUB has
  // reconnected, what is published is lost to it. carol writes new keys
  // under prefix until one reaches reader.
  void wait_subscribed(ChpPeer& reader, const std::string& prefix) {
    int n = 0;
    BOOST_REQUIRE(wait_until([&] {
      std::string key = prefix + "marker" + std::to_string(n++);
      carol->set(key, "m");
      return reader.wait_kvpub(key, 300ms).has_value();
    }));
  }
  double resubscriptions() { return metric(z->metrics(), "zstore_chp_acl_resubscriptions_total"); }
  double denied(const std::string& kind) {
    return metric(z->metrics(), "zstore_chp_acl_denied_total{kind=\"" + kind + "\"}");
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(rules_parse_and_match_prefixes) {
  ChpAcl acl = rules();
  BOOST_TEST(acl.rules() == 5u);
  BOOST_TEST(acl.may_write("alice", "/app/x"));
  BOOST_TEST(!acl.may_write("alice", "/shared/x"));
  BOOST_TEST(acl.may_read("alice", "/shared/x"));
  BOOST_TEST(!acl.may_read("alice", "/bob/x"));
  BOOST_TEST(!acl.may_read("bob", "/bob/x"));
  BOOST_TEST(acl.may_write("bob", "/bob/x"));
  BOOST_TEST(acl.may_read("carol", "anything"));
  BOOST_TEST(!acl.may_read("nobody", "/app/x"));
  BOOST_TEST(acl.may_write(std::string(zstore::server::kPeerName), "/any"));
  BOOST_TEST((acl.permitted_topics("bob", "") == std::vector<std::string>{"/app/public/"}));
  BOOST_TEST((acl.permitted_topics("bob", "/app/") == std::vector<std::string>{"/app/public/"}));
  BOOST_TEST((acl.permitted_topics("bob", "/app/public/x") == std::vector<std::string>{"/app/public/x"}));
  BOOST_TEST(acl.permitted_topics("bob", "/shared/").empty());
  BOOST_TEST(acl.permitted_topics("nobody", "").empty());
  std::string error;
  for (const char* bad : {"alice x /a\n", "alice rw\n", "alice rw /a extra\n"}) {
    BOOST_TEST(!ChpAcl::parse(bad, &error).has_value(), bad);
    BOOST_TEST(error.find("line 1") != std::string::npos, error);
  }
}

BOOST_FIXTURE_TEST_CASE(kvset_outside_w_prefixes_is_not_applied, Fixture) {
  auto alice = peer("alice");
  auto bob = peer("bob");
  BOOST_REQUIRE(alice->wait_connected());
  BOOST_REQUIRE(bob->wait_connected());
  alice->set("/shared/by-alice", "x");  // r only
  bob->set("/app/by-bob", "x");         // r only under /app/public/, nothing else
  bob->set("/bob/ok", "1");             // bob's own prefix
  alice->set("/app/ok", "1");
  BOOST_REQUIRE(carol->wait_kvpub("/bob/ok", 5s));
  BOOST_REQUIRE(wait_until([&] { return keys_seen_by("carol").count("/app/ok") == 1; }));
  auto all = keys_seen_by("carol");
  BOOST_TEST(all.count("/shared/by-alice") == 0u);
  BOOST_TEST(all.count("/app/by-bob") == 0u);
  BOOST_TEST(denied("write") == 2.0);
  BOOST_TEST(z->server.log().find("ACL: dropped KVSET of '/app/by-bob' from client 'bob'") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(snapshot_holds_only_keys_inside_r_prefixes, Fixture) {
  for (const char* k : {"/app/public/p", "/app/secret", "/shared/s", "/bob/b", "/other"}) put(k, "v");
  BOOST_TEST((keys_seen_by("bob") == std::set<std::string>{"/app/public/p"}));
  BOOST_TEST((keys_seen_by("bob", "/app/") == std::set<std::string>{"/app/public/p"}));
  BOOST_TEST((keys_seen_by("alice") == std::set<std::string>{"/app/public/p", "/app/secret", "/shared/s"}));
  BOOST_TEST(keys_seen_by("dave").empty());  // allowed in, but no rule
  BOOST_TEST(keys_seen_by("carol").size() == 5u);
  // Withheld, of the 5 keys and carol's probe key: from bob's whole map 4,
  // from bob's /app/ 1, from alice's 2, from dave's 6.
  BOOST_TEST(wait_until([&] { return denied("snapshot_key") == 13.0; }));
}

BOOST_FIXTURE_TEST_CASE(live_updates_outside_r_prefixes_never_arrive, Fixture) {
  auto bob = peer("bob");
  auto dave = peer("dave");
  // HUGZ reach everyone: once one arrives, the subscriptions are in place.
  for (auto* p : {bob.get(), dave.get()}) {
    BOOST_REQUIRE(wait_until([&] {
      auto u = p->next_update(200ms);
      return u && std::holds_alternative<chp::Hugz>(*u);
    }));
  }
  put("/app/secret", "s");
  put("/app/public/p", "p");
  auto p_sequence = carol->snapshot("", 5s)->entries.at("/app/public/p").sequence;
  // Everything each receives until a HUGZ carrying p's sequence or later:
  // one PUB sends in order, so whatever was published before it is there.
  auto seen_until_hugz = [&](ChpPeer& p) {
    std::set<std::string> saw;
    BOOST_TEST(wait_until([&] {
      auto u = p.next_update(200ms);
      if (auto* kv = u ? std::get_if<chp::KvMsg>(&*u) : nullptr) saw.insert(kv->key);
      auto* hugz = u ? std::get_if<chp::Hugz>(&*u) : nullptr;
      return hugz && hugz->sequence >= p_sequence;
    }));
    return saw;
  };
  auto bob_saw = seen_until_hugz(*bob), dave_saw = seen_until_hugz(*dave);
  BOOST_TEST(bob_saw.count("/app/public/p") == 1u);
  BOOST_TEST(bob_saw.count("/app/secret") == 0u);
  BOOST_TEST(dave_saw.empty());
  BOOST_TEST(denied("subscription") == 2.0);  // bob's and dave's "" subscriptions narrowed; carol's not
}

BOOST_FIXTURE_TEST_CASE(ha_peer_requests_from_clients_are_ignored, Fixture) {
  auto alice = peer("alice");
  alice->send_snapshot_port({"RECONCILE?", std::string(8, '\0')});
  alice->send_snapshot_port({std::string(chp::kPeerSnapshot), ""});
  BOOST_REQUIRE(wait_until([&] { return denied("peer_request") == 2.0; }));
}

BOOST_FIXTURE_TEST_CASE(refused_keys_are_counted_by_port, Fixture) {
  auto port = [&](const std::string& p) {
    return metric(z->metrics(), "zstore_auth_failures_total{port=\"" + p + "\"}");
  };
  BOOST_TEST(port("chp-snapshot") == 0.0);
  zstore::security::SocketSecurity stranger{zstore::security::generate_cert(), keys.server.public_key};
  ChpPeer intruder(ctx, "tcp://127.0.0.1", z->server.chp_port(), stranger);
  BOOST_TEST(!intruder.snapshot("", 1s).has_value());
  // The DEALER, SUB and PUB each tried (and retry) to connect.
  BOOST_TEST(wait_until(
      [&] { return port("chp-snapshot") >= 1.0 && port("chp-updates") >= 1.0 && port("chp-collector") >= 1.0; }));
  BOOST_TEST(port("http") == 0.0);
}

// SIGHUP: dave (no rules) gets rw /dave/ and alice loses w /app/; then a
// malformed file is refused and the rules in force stay.
BOOST_FIXTURE_TEST_CASE(sighup_rereads_the_rules_and_a_bad_file_keeps_them, Fixture) {
  auto alice = peer("alice");
  auto dave = peer("dave");
  BOOST_REQUIRE(alice->wait_connected());
  dave->set("/dave/before", "x");
  BOOST_REQUIRE(wait_until([&] { return denied("write") == 1.0; }));
  std::ofstream(acl_file, std::ios::trunc) << "alice r /app/\ndave rw /dave/\ncarol rw *\n";
  z->server.kill(SIGHUP);
  BOOST_REQUIRE(wait_until([&] { return log_count("SIGHUP: CHP access rules: 3 rule(s)") == 1; }));
  // alice's r prefixes changed: every subscriber, carol too, subscribes again.
  BOOST_REQUIRE(wait_until([&] { return resubscriptions() == 1.0; }));
  wait_subscribed(*carol, "/");
  dave->set("/dave/after", "y");
  BOOST_REQUIRE(carol->wait_kvpub("/dave/after", 5s));
  BOOST_TEST((keys_seen_by("dave") == std::set<std::string>{"/dave/after"}));
  alice->set("/app/now-refused", "z");
  BOOST_REQUIRE(wait_until([&] { return denied("write") == 2.0; }));

  std::ofstream(acl_file, std::ios::trunc) << "dave zz /dave/\n";
  z->server.kill(SIGHUP);
  BOOST_REQUIRE(wait_until([&] { return log_count("keeping the previous access rules") == 1; }));
  BOOST_TEST(z->server.log().find("line 1") != std::string::npos);
  dave->set("/dave/still", "z");  // the previous rules still hold
  BOOST_REQUIRE(carol->wait_kvpub("/dave/still", 5s));
  alice->set("/app/still-refused", "z");
  BOOST_REQUIRE(wait_until([&] { return denied("write") == 3.0; }));
  BOOST_TEST(keys_seen_by("carol").count("/app/now-refused") == 0u);
}

// A reload that takes an r prefix away reaches live subscriptions too:
// alice (r /app/ and /shared/) subscribed to everything; after a reload
// that changes only w prefixes she still receives /shared/ updates on the
// same connection, after one that leaves her r /app/ only she is dropped,
// subscribes again, and receives /app/ updates but no /shared/ one.
BOOST_FIXTURE_TEST_CASE(a_reload_that_changes_r_prefixes_narrows_live_subscriptions, Fixture) {
  auto alice = peer("alice");
  BOOST_REQUIRE(alice->wait_connected());
  auto reload = [&](const std::string& rules, std::size_t times) {
    std::ofstream(acl_file, std::ios::trunc) << rules << "alice rw __zstore_test_probe\nbob rw __zstore_test_probe\n";
    z->server.kill(SIGHUP);
    BOOST_REQUIRE(wait_until([&] { return log_count("SIGHUP: CHP access rules") == times; }));
  };
  // The keys alice receives until `last` (one PUB sends in order).
  auto seen_until = [&](const std::string& last) {
    std::set<std::string> saw;
    BOOST_REQUIRE(wait_until([&] {
      auto u = alice->next_update(200ms);
      auto* kv = u ? std::get_if<chp::KvMsg>(&*u) : nullptr;
      if (kv) saw.insert(kv->key);
      return kv && kv->key == last;
    }));
    return saw;
  };
  reload(std::string(kRules) + "dave w /dave/\n", 1);
  carol->set("/shared/kept", "1");
  carol->set("/app/a1", "1");
  BOOST_TEST(seen_until("/app/a1").count("/shared/kept") == 1u);
  BOOST_TEST(resubscriptions() == 0.0);  // the turn that published /app/a1 had seen the reload

  reload("alice rw /app/\ncarol rw *\n", 2);
  BOOST_REQUIRE(wait_until([&] { return resubscriptions() == 1.0; }));
  wait_subscribed(*alice, "/app/");
  carol->set("/shared/revoked", "2");
  carol->set("/app/a2", "2");
  BOOST_TEST(seen_until("/app/a2").count("/shared/revoked") == 0u);
  BOOST_TEST((keys_seen_by("alice", "/shared/").empty()));
}

BOOST_AUTO_TEST_CASE(acl_needs_curve_and_a_valid_file) {
  CurveKeys keys{{"alice"}, {"alice"}};
  TempDir data;
  std::string acl = (keys.dir.path() / "acl").string();
  std::ofstream(acl) << "alice rw /a\nalice zz /b\n";
  auto start = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"--data-dir",   data.str(), "--chp-port",   std::to_string(free_port_range(3)),
                                  "--dafka-port", "0",        "--tower-port", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    Process p(bin_path("zstored"), args, data.path() / "log");
    int code = p.wait(20s);
    return std::pair{code, p.log()};
  };
  auto plain = start({"--acl", acl});
  BOOST_TEST(plain.first == 2, plain.second);
  BOOST_TEST(plain.second.find("--acl needs --curve-cert") != std::string::npos, plain.second);
  auto args = keys.server_args();
  args.insert(args.end(), {"--acl", acl});
  auto bad = start(args);
  BOOST_TEST(bad.first == 1, bad.second);
  BOOST_TEST(bad.second.find("line 2") != std::string::npos, bad.second);
}

// "zstored" names the server's own key, which may do everything (the HA
// peer): a client certificate saved as zstored.key in the allow dir must not
// get that name, nor be admitted at all.
BOOST_AUTO_TEST_CASE(a_client_key_named_zstored_is_not_admitted) {
  CurveKeys keys{{"zstored", "carol"}, {"zstored", "carol"}};
  std::string acl_file = (keys.dir.path() / "acl").string();
  std::ofstream(acl_file) << "carol rw *\n";
  auto args = keys.server_args();
  args.insert(args.end(), {"--acl", acl_file});
  HttpZstored z(args);
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  zmq::context_t ctx;
  ChpPeer carol(ctx, "tcp://127.0.0.1", z.server.chp_port(), keys.as("carol"));
  BOOST_REQUIRE(carol.wait_connected());
  carol.set("/secret", "s");
  BOOST_REQUIRE(carol.wait_kvpub("/secret", 5s));
  ChpPeer impostor(ctx, "tcp://127.0.0.1", z.server.chp_port(), keys.as("zstored"));
  BOOST_TEST(!impostor.snapshot("", 1s).has_value());
  BOOST_TEST(z.server.log().find("the name 'zstored' is reserved") != std::string::npos, z.server.log());
}

// A key's history needs the read right a snapshot of that key needs.
BOOST_FIXTURE_TEST_CASE(history_of_a_key_needs_its_read_right, Fixture) {
  put("/app/public/p", "1");
  put("/app/secret", "2");
  auto ask = [&](const std::string& name, const std::string& key) {
    zstore::client::Options o;
    o.servers = {z->server.chp_endpoint()};
    o.security = keys.as(name);
    return zstore::client::key_history(o, key, 64, scaled(10s));
  };
  using R = zstore::client::KeyHistory::Result;
  auto refused = ask("bob", "/app/secret");
  BOOST_TEST(zstore::client::to_string(refused.result) == std::string("refused"));
  BOOST_TEST(refused.versions.empty());
  BOOST_TEST(denied("history") == 1.0);
  auto allowed = ask("bob", "/app/public/p");
  BOOST_REQUIRE((allowed.result == R::kOk));
  BOOST_REQUIRE_EQUAL(allowed.versions.size(), 1u);
  BOOST_TEST(allowed.versions[0].body == "1");
  BOOST_TEST((ask("alice", "/app/secret").result == R::kOk));
}
