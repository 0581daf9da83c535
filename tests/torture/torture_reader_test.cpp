// The torture reader (tools/torture_src/chp_reader.h) fed by a publisher of
// hand-made KVPUBs: what it concludes a key must end up with.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <thread>

#include <zmq.hpp>

#include "protocol/chp_codec.h"
#include "tests/support/test_support.h"
#include "tools/torture_src/chp_reader.h"

using namespace zstore::torture;
namespace chp = zstore::protocol::chp;

namespace {

std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Publisher {
  zmq::context_t ctx;
  zmq::socket_t pub{ctx, zmq::socket_type::pub};
  std::string endpoint;
  std::uint64_t seq = 100;

  Publisher() {
    pub.set(zmq::sockopt::linger, 0);
    pub.bind("tcp://127.0.0.1:0");
    endpoint = pub.get(zmq::sockopt::last_endpoint);
  }
  void send(const std::string& key, const std::string& uuid, const std::string& body) {
    auto frames = chp::encode_kvmsg(chp::KvMsg{key, ++seq, uuid, "", body});
    for (std::size_t i = 0; i < frames.size(); ++i) {
      pub.send(zmq::buffer(frames[i]), i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
    }
  }
};

// Republishes op (the same op at a higher sequence is allowed with HA) until
// the reader has seen count KVPUBs: the subscription is live.
bool until_seen(Publisher& p, ChpReader& r, const std::string& key, const std::string& uuid, const std::string& value) {
  return zstore::testing::wait_until(
      [&] {
        p.send(key, uuid, value);
        return r.kvpubs() > 0;
      },
      std::chrono::seconds(10));
}

// Waits until the reader has taken the publisher's last KVPUB. Counting
// KVPUBs is not enough: until_seen's extra copies may still be in flight.
bool wait_taken_last(Publisher& p, ChpReader& r) {
  return zstore::testing::wait_until([&] { return r.max_sequence() >= p.seq; }, std::chrono::seconds(10));
}

std::string uuid(int n) { return std::string(16, static_cast<char>('a' + n)); }  // CHP UUIDs are 16 bytes

}  // namespace

// A member restarted with an older map expires its own copy of a key while
// the last op seen has no ttl, and a later op with a ttl that has run out
// was never published (sent while both members were down): the key must
// still end up with the last op seen, so the expiry changes nothing.
BOOST_AUTO_TEST_CASE(stale_expiry_is_not_taken_for_an_op_never_published) {
  Publisher p;
  ChpHistory history;
  Violations violations;
  std::int64_t long_ago = wall_ms() - 10'000;
  history.record("/k", ChpOp{uuid(0), "v0", 0, long_ago});
  history.record("/k", ChpOp{uuid(1), "v1", 1, long_ago});  // ttl 1 s, never published
  ChpReader reader(p.ctx, {p.endpoint}, history, violations, true, Divergence::kStale);
  BOOST_REQUIRE(until_seen(p, reader, "/k", uuid(0), "v0"));
  p.send("/k", "", "");  // the stale member's expiry
  BOOST_REQUIRE(wait_taken_last(p, reader));
  auto seen = reader.seen().at("/k");
  BOOST_REQUIRE(seen.op.has_value());
  BOOST_CHECK_EQUAL(*seen.op, 0u);
  BOOST_CHECK(!seen.expired);
  BOOST_CHECK_EQUAL(violations.count(), 0u);
}

// The last op seen had a ttl that has run out: the expiry is of that op.
BOOST_AUTO_TEST_CASE(expiry_of_the_last_op_seen_counts) {
  Publisher p;
  ChpHistory history;
  Violations violations;
  std::int64_t long_ago = wall_ms() - 10'000;
  history.record("/k", ChpOp{uuid(0), "v0", 0, long_ago});
  history.record("/k", ChpOp{uuid(1), "v1", 1, long_ago});
  history.record("/k", ChpOp{uuid(2), "v2", 1, long_ago});  // never published
  ChpReader reader(p.ctx, {p.endpoint}, history, violations, true, Divergence::kStale);
  BOOST_REQUIRE(until_seen(p, reader, "/k", uuid(1), "v1"));
  p.send("/k", "", "");
  BOOST_REQUIRE(wait_taken_last(p, reader));
  auto seen = reader.seen().at("/k");
  BOOST_REQUIRE(seen.op.has_value());
  BOOST_CHECK_EQUAL(*seen.op, 1u);
  BOOST_CHECK(seen.expired);
}
