// zstored's resume (docs/chp-extensions.md): an ICANHAZ? with the client's
// last sequence gets only the updates after it, in sequence order, deletes
// and expiries included, inside the subtree, then KTHXBAI with resumed=1;
// a sequence the history does not cover, or a history longer than the map,
// gets the full snapshot.
#include <boost/test/unit_test.hpp>

#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "protocol/chp_codec.h"
#include "tests/ops/ops_support.h"
#include "tests/support/curve_keys.h"
#include "tests/support/chp_peer.h"
#include "tests/support/zstored_fixtures.h"

using namespace std::chrono_literals;
using zstore::testing::ChpPeer;
using zstore::testing::ChpSnapshot;
using Server = zstore::testing::ZstoredServer;
namespace chp = zstore::protocol::chp;

namespace {

std::string property(const std::string& properties, const std::string& name) {
  auto parsed = chp::parse_properties(properties);
  if (!parsed) return {};
  for (const auto& [n, v] : *parsed) {
    if (n == name) return v;
  }
  return {};
}

std::vector<std::string> keys_in_order(const ChpSnapshot& s) {
  std::vector<std::string> out;
  for (const auto& kv : s.in_order) out.push_back(kv.key);
  return out;
}

// The map a client holding `before` has after applying the resume.
std::map<std::string, std::string> applied(std::map<std::string, std::string> before, const ChpSnapshot& resume) {
  for (const auto& kv : resume.in_order) {
    if (kv.body.empty()) {
      before.erase(kv.key);
    } else {
      before[kv.key] = kv.body;
    }
  }
  return before;
}

std::map<std::string, std::string> values(const ChpSnapshot& s) {
  std::map<std::string, std::string> out;
  for (const auto& [k, kv] : s.entries) out[k] = kv.body;
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(resume_sends_the_updates_after_the_sequence_in_order) {
  Server s;
  auto p = s.peer();
  p->set("/a", "1");
  p->set("/b", "2");
  p->set("/x/c", "3");
  BOOST_REQUIRE(p->wait_kvpub("/x/c", 5s));
  auto before = p->snapshot("");
  BOOST_REQUIRE(before);
  BOOST_CHECK(!property(before->properties, "history-from").empty());
  BOOST_CHECK(property(before->properties, "resumed").empty());

  p->set("/b", "");  // delete
  p->set("/d", "4");
  p->set("/x/e", "5");
  p->set("/a", "1b");
  BOOST_REQUIRE(p->wait_kvpub("/a", 5s));
  auto now = p->snapshot("");
  BOOST_REQUIRE(now);

  auto resumed = p->resume("", before->sequence);
  BOOST_REQUIRE(resumed);
  BOOST_CHECK_EQUAL(property(resumed->properties, "resumed"), "1");
  BOOST_CHECK((keys_in_order(*resumed) == std::vector<std::string>{"/b", "/d", "/x/e", "/a"}));
  BOOST_CHECK(resumed->in_order.at(0).body.empty());
  BOOST_CHECK_EQUAL(resumed->sequence, now->sequence);
  for (std::size_t i = 1; i < resumed->in_order.size(); ++i) {
    BOOST_CHECK_GT(resumed->in_order[i].sequence, resumed->in_order[i - 1].sequence);
  }
  BOOST_CHECK(applied(values(*before), *resumed) == values(*now));

  auto subtree = p->resume("/x/", before->sequence);
  BOOST_REQUIRE(subtree);
  BOOST_CHECK_EQUAL(property(subtree->properties, "resumed"), "1");
  BOOST_CHECK((keys_in_order(*subtree) == std::vector<std::string>{"/x/e"}));

  auto nothing = p->resume("", now->sequence);  // already current
  BOOST_REQUIRE(nothing);
  BOOST_CHECK_EQUAL(property(nothing->properties, "resumed"), "1");
  BOOST_CHECK(nothing->in_order.empty());
}

BOOST_AUTO_TEST_CASE(resume_carries_expiries) {
  Server s;
  auto p = s.peer();
  p->set("/lease", "held", "ttl=2\n");  // still held when the snapshot below is taken
  BOOST_REQUIRE(p->wait_kvpub("/lease", 5s));
  auto before = p->snapshot("");
  BOOST_REQUIRE(before);
  BOOST_REQUIRE(before->entries.count("/lease"));
  auto expiry = p->wait_kvpub("/lease", 10s);  // the server's delete
  BOOST_REQUIRE(expiry);
  BOOST_CHECK(expiry->body.empty());
  auto resumed = p->resume("", before->sequence);
  BOOST_REQUIRE(resumed);
  BOOST_CHECK_EQUAL(property(resumed->properties, "resumed"), "1");
  BOOST_REQUIRE_EQUAL(resumed->in_order.size(), 1u);
  BOOST_CHECK_EQUAL(resumed->in_order[0].key, "/lease");
  BOOST_CHECK(resumed->in_order[0].body.empty());
}

// A sequence beyond ours, from another server's history, or older than the
// history kept: the whole map, without resumed.
BOOST_AUTO_TEST_CASE(a_sequence_the_history_does_not_cover_gets_the_full_snapshot) {
  Server s({"--chp-history", "2"});
  auto p = s.peer();
  auto first = p->snapshot("");
  BOOST_REQUIRE(first);
  for (int i = 0; i < 10; ++i) p->set("/k" + std::to_string(i), "v");
  BOOST_REQUIRE(p->wait_kvpub("/k9", 5s));
  auto now = p->snapshot("");
  BOOST_REQUIRE(now);
  for (std::uint64_t after : {first->sequence, now->sequence + 1000, std::uint64_t{12345}}) {
    auto full = p->resume("", after);
    BOOST_REQUIRE(full);
    BOOST_CHECK_MESSAGE(property(full->properties, "resumed").empty(), "resumed after " << after);
    BOOST_CHECK(values(*full) == values(*now));
  }
  BOOST_CHECK_GT(std::stoull(property(now->properties, "history-from")), first->sequence);
}

// --chp-history-ms: entries older than the bound leave the history (so a
// deleted value leaves the disk in bounded time), even with no new writes;
// a client away longer than that gets the full snapshot.
BOOST_AUTO_TEST_CASE(history_entries_older_than_the_age_bound_are_dropped) {
  // 2 s: the early resume below must come within it on a loaded machine
  // (with 300 ms it could come after); the late loop waits up to 10 s.
  Server s({"--chp-history-ms", "2000"});
  auto p = s.peer();
  auto first = p->snapshot("");
  BOOST_REQUIRE(first);
  p->set("/a", "1");
  p->set("/b", "2");
  BOOST_REQUIRE(p->wait_kvpub("/b", 5s));
  auto early = p->resume("", first->sequence);  // within the bound: resumed
  BOOST_REQUIRE(early);
  BOOST_CHECK_EQUAL(property(early->properties, "resumed"), "1");
  std::optional<ChpSnapshot> late;
  for (auto deadline = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < deadline;) {
    late = p->resume("", first->sequence);
    BOOST_REQUIRE(late);
    if (property(late->properties, "resumed").empty()) break;
    std::this_thread::sleep_for(50ms);  // paces the requests of a wait with a deadline
  }
  BOOST_CHECK_MESSAGE(property(late->properties, "resumed").empty(), "history kept entries past --chp-history-ms");
  auto now = p->snapshot("");  // the full map (the peer's connection probes included)
  BOOST_REQUIRE(now);
  BOOST_CHECK(values(*late) == values(*now));
  BOOST_CHECK_EQUAL(values(*late)["/b"], "2");
  BOOST_CHECK_GE(std::stoull(property(late->properties, "history-from")), early->sequence);
}

// The HA follower's CATCHUP? (a passive that lost KVPUBs): the updates
// after its sequence with their exact expiry, KTHXBAI with resumed=1; when
// the history does not reach back, a bare KTHXBAI (it then asks for the
// whole map), never the whole map in reply. Only the HA peer is answered
// (tests/ops/ha_peer_requests_test.cpp): here, a client holding the
// server's own key, as a pair's members do under CURVE.
BOOST_AUTO_TEST_CASE(a_catch_up_gets_the_history_or_nothing) {
  zstore::testing::CurveKeys keys({}, {});
  auto args = keys.server_args();
  args.insert(args.end(), {"--chp-history", "4"});
  Server s(args);
  auto p = std::make_unique<ChpPeer>(s.ctx, "tcp://127.0.0.1", s.zstored.chp_port(),
                                     zstore::security::SocketSecurity{keys.server, keys.server.public_key});
  BOOST_REQUIRE(p->wait_connected());
  auto first = p->snapshot("");
  BOOST_REQUIRE(first);
  for (int i = 0; i < 10; ++i) p->set("/k" + std::to_string(i), "v", i == 9 ? "ttl=60\n" : "");
  BOOST_REQUIRE(p->wait_kvpub("/k9", 5s));
  auto now = p->snapshot("");
  BOOST_REQUIRE(now);

  auto caught = p->catch_up(now->sequence - 2);
  BOOST_REQUIRE(caught);
  BOOST_CHECK_EQUAL(property(caught->properties, "resumed"), "1");
  BOOST_CHECK_EQUAL(caught->sequence, now->sequence);
  BOOST_CHECK((keys_in_order(*caught) == std::vector<std::string>{"/k8", "/k9"}));
  BOOST_REQUIRE_EQUAL(caught->in_order.size(), 2u);
  BOOST_CHECK(!property(caught->in_order[1].properties, "expires-at").empty());

  auto nothing = p->catch_up(first->sequence);  // older than the 4 entries kept
  BOOST_REQUIRE(nothing);
  BOOST_CHECK(property(nothing->properties, "resumed").empty());
  BOOST_CHECK(nothing->in_order.empty());
  BOOST_CHECK_EQUAL(nothing->sequence, now->sequence);
}

// A client behind more updates than the map has keys (and than the 1024 a
// resume may always send) gets the full snapshot: it is the cheaper answer.
// Both answers are counted in /metrics.
BOOST_AUTO_TEST_CASE(a_history_longer_than_the_map_gets_the_full_snapshot) {
  zstore::testing::HttpZstored z;
  BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log());
  zmq::context_t ctx;
  ChpPeer p(ctx, "tcp://127.0.0.1", z.server.chp_port());
  BOOST_REQUIRE(p.wait_connected());
  for (int i = 0; i < 3; ++i) p.set("/k" + std::to_string(i), "v");
  BOOST_REQUIRE(p.wait_kvpub("/k2", 5s));
  auto before = p.snapshot("");
  BOOST_REQUIRE(before);
  for (int i = 0; i < 999; ++i) p.set("/hot", std::to_string(i));
  p.set("/m1", "x");
  BOOST_REQUIRE(p.wait_kvpub("/m1", 10s));
  auto near = p.resume("", before->sequence);  // 1000 updates: resumed
  BOOST_REQUIRE(near);
  BOOST_CHECK_EQUAL(property(near->properties, "resumed"), "1");

  for (int i = 999; i < 1099; ++i) p.set("/hot", std::to_string(i));
  p.set("/m2", "x");
  BOOST_REQUIRE(p.wait_kvpub("/m2", 10s));
  auto now = p.snapshot("");
  BOOST_REQUIRE(now);
  auto far = p.resume("", before->sequence);  // 1101 updates, 6 keys: the snapshot
  BOOST_REQUIRE(far);
  BOOST_CHECK(property(far->properties, "resumed").empty());
  BOOST_CHECK(values(*far) == values(*now));
  BOOST_CHECK_EQUAL(values(*far)["/hot"], "1098");

  auto m = z.metrics();
  BOOST_CHECK_EQUAL(zstore::testing::metric(m, "zstore_chp_resumes_total"), 1.0);
  BOOST_CHECK_EQUAL(zstore::testing::metric(m, "zstore_chp_resumes_declined_total"), 1.0);
}
