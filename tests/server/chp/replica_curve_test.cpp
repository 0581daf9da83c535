// A read replica of a CURVE upstream (--replica-server-key, docs/replicas.md):
// the replica follows and forwards over CURVE with its own key, serves its
// own CURVE clients under its own --acl, and the upstream judges what the
// replica forwards by the replica's key. A replica whose key the upstream
// does not allow gets nothing; the flag without --curve-cert is refused.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <zmq.hpp>

#include "tests/support/curve_keys.h"
#include "tests/support/chp_peer.h"
#include "tests/support/zstored_fixtures.h"

using namespace zstore::testing;
using namespace std::chrono_literals;

namespace {

// The probe key lets ChpPeer::wait_connected write through the ACLs.
constexpr const char* kUpstreamRules = "replica rw *\nalice rw /app/\nalice rw __zstore_test_probe\n";
// At the replica: alice may write /app/, bob only read.
constexpr const char* kReplicaRules =
    "alice rw /app/\nalice rw __zstore_test_probe\nbob r *\nbob rw __zstore_test_probe\n";

struct Fixture {
  zmq::context_t ctx;
  CurveKeys keys{{"replica", "stranger", "alice", "bob"}, {"replica", "alice"}};
  std::filesystem::path replica_allow = keys.dir.path() / "replica-allow";
  std::unique_ptr<Zstored> upstream;

  Fixture() {
    std::filesystem::create_directories(replica_allow);
    for (const char* n : {"alice", "bob"}) {
      std::filesystem::copy_file(keys.dir.path() / (std::string(n) + ".key"),
                                 replica_allow / (std::string(n) + ".key"));
    }
    write("upstream.acl", kUpstreamRules);
    write("replica.acl", kReplicaRules);
    auto args = keys.server_args();
    args.insert(args.end(), {"--acl", keys.file("upstream.acl")});
    upstream = std::make_unique<Zstored>(args);
    BOOST_REQUIRE_MESSAGE(upstream->start(), upstream->log());
  }
  void write(const std::string& name, const std::string& text) { std::ofstream(keys.file(name)) << text; }

  // A replica of the upstream authenticating as `name`.
  std::unique_ptr<Zstored> replica(const std::string& name) {
    std::vector<std::string> args = {"--replica-of",
                                     upstream->chp_endpoint(),
                                     "--hugz-interval-ms",
                                     "200",
                                     "--replica-silence-ms",
                                     "1000",
                                     "--curve-cert",
                                     keys.file(name + ".key_secret"),
                                     "--curve-allow",
                                     replica_allow.string(),
                                     "--acl",
                                     keys.file("replica.acl"),
                                     "--replica-server-key",
                                     keys.file("server.key")};
    return std::make_unique<Zstored>(args);
  }
  // A CURVE client of the replica (whose server key is the replica's own).
  std::unique_ptr<ChpPeer> client_of_replica(const Zstored& r, const std::string& who, const std::string& as) {
    zstore::security::SocketSecurity s{keys.clients.at(who), keys.clients.at(as).public_key};
    return std::make_unique<ChpPeer>(ctx, "tcp://127.0.0.1", r.chp_port(), s);
  }
  std::unique_ptr<ChpPeer> client_of_upstream(const std::string& who) {
    return std::make_unique<ChpPeer>(ctx, "tcp://127.0.0.1", upstream->chp_port(), keys.as(who));
  }
};

bool synced(const Zstored& z) { return z.log().find("replica: synced from") != std::string::npos; }

}  // namespace

BOOST_FIXTURE_TEST_CASE(a_replica_follows_and_forwards_over_curve_under_both_acls, Fixture) {
  auto up_alice = client_of_upstream("alice");
  BOOST_REQUIRE(up_alice->wait_connected());
  up_alice->set("/app/before", "1");
  BOOST_REQUIRE(up_alice->wait_kvpub("/app/before", 5s));

  auto r = replica("replica");
  BOOST_REQUIRE_MESSAGE(r->start(), r->log());
  BOOST_REQUIRE_MESSAGE(wait_until([&] { return synced(*r); }, 20s), r->log());
  BOOST_TEST(r->log().find("over CURVE") != std::string::npos);

  auto alice = client_of_replica(*r, "alice", "replica");
  BOOST_REQUIRE(alice->wait_connected());
  auto snap = alice->snapshot("/app/", 5s);
  BOOST_REQUIRE(snap);
  BOOST_TEST(snap->entries.count("/app/before") == 1u);

  // bob may not write /app/ at the replica: never forwarded. alice's write
  // after it goes through, so once the upstream has alice's, bob's is not coming.
  auto bob = client_of_replica(*r, "bob", "replica");
  BOOST_REQUIRE(bob->wait_connected());
  bob->set("/app/from-bob", "no");
  alice->set("/app/from-alice", "yes");
  auto seen = up_alice->wait_kvpub("/app/from-alice", 10s);
  BOOST_REQUIRE(seen);
  BOOST_REQUIRE(alice->wait_kvpub("/app/from-alice", 10s));  // back down through the replica
  auto up = up_alice->snapshot("/app/", 5s);
  BOOST_REQUIRE(up);
  BOOST_TEST(up->entries.count("/app/from-bob") == 0u);
  BOOST_TEST(up->entries.at("/app/from-alice").sequence == seen->sequence);
}

BOOST_FIXTURE_TEST_CASE(a_replica_whose_key_the_upstream_does_not_allow_gets_nothing, Fixture) {
  auto up_alice = client_of_upstream("alice");
  BOOST_REQUIRE(up_alice->wait_connected());
  up_alice->set("/app/secret", "1");
  BOOST_REQUIRE(up_alice->wait_kvpub("/app/secret", 5s));
  auto good = replica("replica");
  auto bad = replica("stranger");
  BOOST_REQUIRE_MESSAGE(bad->start(), bad->log());
  BOOST_REQUIRE_MESSAGE(good->start(), good->log());
  // The allowed replica syncs; by then the stranger had as long and did not.
  BOOST_REQUIRE_MESSAGE(wait_until([&] { return synced(*good); }, 20s), good->log());
  BOOST_TEST(!synced(*bad), bad->log());
}

BOOST_AUTO_TEST_CASE(replica_server_key_without_curve_cert_is_refused_at_start) {
  CurveKeys keys{{}, {}};
  Zstored r({"--replica-of", "tcp://127.0.0.1:1", "--replica-server-key", keys.file("server.key")});
  BOOST_TEST(!r.start(5s));
  BOOST_TEST(r.log().find("--replica-server-key needs --curve-cert") != std::string::npos, r.log());
}
