// client::lookup_key against scripted fake CHP servers: an exact key, never
// one that only starts with it; it returns as soon as the key arrives, needs
// no subscriber, proves absence only with a complete clean snapshot, and
// moves to the next server when one stays silent.
#include "client/key_lookup.h"

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <string>

#include <zmq.hpp>

#include "protocol/chp_codec.h"
#include "tests/client/fake_chp_server.h"
#include "tests/support/test_support.h"

namespace chp = zstore::protocol::chp;
using zstore::client::KeyLookup;
using zstore::client::lookup_key;
using zstore::client::Options;
using zstore::testing::FakeChpServer;
using namespace std::chrono_literals;

namespace {

using Result = KeyLookup::Result;

// A failover timeout no answer on a loaded machine outlasts: a retry would
// add a request to the counts the cases check. The case that wants retries
// within its lookup timeout passes a short one.
Options options_for(std::vector<std::string> servers, std::chrono::milliseconds failover = 2000ms) {
  Options o;
  o.servers = std::move(servers);
  o.failover_timeout = failover;
  return o;
}

chp::KvMsg entry(const std::string& key, const std::string& value) { return {key, 1, "", "", value}; }

}  // namespace

BOOST_AUTO_TEST_CASE(finds_the_exact_key_and_never_a_longer_one) {
  zmq::context_t ctx;
  FakeChpServer server(ctx);
  server.reset_map({{"/a/b", "1"}, {"/a/bc", "2"}, {"/a/b/c", "3"}, {"/a/c", "4"}}, 4);
  auto b = lookup_key(options_for({server.endpoint()}), "/a/b", 5s);
  BOOST_CHECK(b.result == Result::kFound);
  BOOST_CHECK_EQUAL(b.value, "1");
  BOOST_CHECK_EQUAL(b.server, server.endpoint());
  auto bc = lookup_key(options_for({server.endpoint()}), "/a/bc", 5s);
  BOOST_CHECK(bc.result == Result::kFound);
  BOOST_CHECK_EQUAL(bc.value, "2");
  auto a = lookup_key(options_for({server.endpoint()}), "/a/", 5s);  // only longer keys exist
  BOOST_CHECK(a.result == Result::kAbsent);
  BOOST_CHECK_EQUAL(a.value, "");
  // Each lookup asked for the key's subtree: the least CHP lets a client ask for.
  BOOST_CHECK((server.request_subtrees() == std::vector<std::string>{"/a/b", "/a/bc", "/a/"}));
}

BOOST_AUTO_TEST_CASE(returns_when_the_key_arrives_without_the_rest_of_the_subtree) {
  zmq::context_t ctx;
  FakeChpServer server(ctx);
  server.set_heartbeat(false);  // no HUGZ: a lookup must not wait for a subscriber
  // The key, then a stream that never ends: waiting for KTHXBAI would time out.
  server.set_request_hook([](FakeChpServer& s, const std::string& id, const std::string&, int) {
    s.send_to(id, chp::encode_kvmsg(entry("/k", "value")));
    s.send_to(id, chp::encode_kvmsg(entry("/k/more", "x")));
  });
  auto started = std::chrono::steady_clock::now();
  auto found = lookup_key(options_for({server.endpoint()}), "/k", 5s);
  BOOST_CHECK(found.result == Result::kFound);
  BOOST_CHECK_EQUAL(found.value, "value");
  BOOST_CHECK_LT(std::chrono::steady_clock::now() - started, 4s);
}

BOOST_AUTO_TEST_CASE(absence_needs_a_complete_snapshot) {
  zmq::context_t ctx;
  FakeChpServer server(ctx);
  server.set_request_hook([](FakeChpServer& s, const std::string& id, const std::string&, int) {
    s.send_to(id, chp::encode_kvmsg(entry("/k/more", "x")));  // never KTHXBAI
  });
  auto r = lookup_key(options_for({server.endpoint()}, 300ms), "/k", 1s);
  BOOST_CHECK(r.result == Result::kNoAnswer);
  BOOST_CHECK_GE(server.requests(), 2);  // asked again after each silence
}

BOOST_AUTO_TEST_CASE(a_malformed_reply_does_not_prove_absence) {
  zmq::context_t ctx;
  FakeChpServer server(ctx);
  server.set_request_hook([](FakeChpServer& s, const std::string& id, const std::string& subtree, int number) {
    if (number == 1) {
      s.send_to(id, {"KVSYNC-ish"});  // malformed: one frame
      s.send_to(id, chp::encode_kthxbai({1, subtree, {}}));
      return;
    }
    s.answer(id, subtree);
  });
  server.reset_map({{"/k", "v"}}, 1);
  auto r = lookup_key(options_for({server.endpoint()}), "/k", 5s);
  BOOST_CHECK(r.result == Result::kFound);
  BOOST_CHECK_EQUAL(r.value, "v");
  BOOST_CHECK_EQUAL(server.requests(), 2);
}

BOOST_AUTO_TEST_CASE(a_silent_server_is_left_for_the_other) {
  zmq::context_t ctx;
  FakeChpServer passive(ctx);
  FakeChpServer active(ctx);
  passive.set_request_hook([](FakeChpServer&, const std::string&, const std::string&, int) {});
  active.reset_map({{"/k", "from active"}}, 1);
  auto r = lookup_key(options_for({passive.endpoint(), active.endpoint()}), "/k", 5s);
  BOOST_CHECK(r.result == Result::kFound);
  BOOST_CHECK_EQUAL(r.value, "from active");
  BOOST_CHECK_EQUAL(r.server, active.endpoint());
  BOOST_CHECK_EQUAL(passive.requests(), 1);
}

BOOST_AUTO_TEST_CASE(no_server_is_no_answer_after_the_timeout) {
  auto port = zstore::testing::free_port_range(3);
  auto started = std::chrono::steady_clock::now();
  auto r = lookup_key(options_for({"tcp://127.0.0.1:" + std::to_string(port)}), "/k", 500ms);
  BOOST_CHECK(r.result == Result::kNoAnswer);
  BOOST_CHECK_GE(std::chrono::steady_clock::now() - started, 500ms);
  BOOST_CHECK_THROW(lookup_key(options_for({"tcp://127.0.0.1:" + std::to_string(port)}), "", 1s),
                    std::invalid_argument);
  BOOST_CHECK_THROW(lookup_key(options_for({"localhost:5556"}), "/k", 1s), std::invalid_argument);
}
