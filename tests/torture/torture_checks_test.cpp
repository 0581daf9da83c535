// The torture checks themselves (tools/torture_src/chp_verify.h) on
// hand-made histories, snapshots and reader views: each guarantee is
// reported when broken and only then.
#include <boost/test/unit_test.hpp>

#include "tools/torture_src/chp_verify.h"

using namespace zstore::torture;
using zstore::protocol::chp::KvMsg;

namespace {

constexpr std::int64_t kT0 = 1'000'000;

struct Fixture {
  ChpHistory history;
  Violations violations;
  std::map<std::string, SeenState> seen;
  SnapshotTaken taken;
  VerifyContext ctx;

  Fixture() {
    taken.requested_ms = kT0 + 10'000;
    taken.completed_ms = kT0 + 10'010;
    ctx.up_since_ms = kT0;
    ctx.killed_ms = kT0 + 9'000;
  }
  void op(const std::string& key, const std::string& uuid, const std::string& value, std::uint64_t ttl,
          std::int64_t at) {
    history.record(key, ChpOp{uuid, value, ttl, at});
  }
  void in_snapshot(const std::string& key, const std::string& uuid, const std::string& value, std::uint64_t seq) {
    taken.snapshot.entries[key] = KvMsg{key, seq, uuid, "", value};
    taken.snapshot.sequence = std::max(taken.snapshot.sequence, seq);
  }
  std::size_t run(std::uint64_t max_seen) {
    verify_chp(taken, seen, max_seen, history, ctx, violations);
    return violations.count();
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(latest_seen_value_in_the_snapshot_passes) {
  Fixture f;
  f.op("/a", "u1", "one", 0, kT0);
  f.op("/a", "u2", "two", 0, kT0 + 1);
  f.seen["/a"] = SeenState{7, 1, false, kT0 + 2};
  f.in_snapshot("/a", "u2", "two", 7);
  BOOST_TEST(f.run(7) == 0u);
}

BOOST_AUTO_TEST_CASE(an_older_value_than_the_one_seen_is_a_lost_update) {
  Fixture f;
  f.op("/a", "u1", "one", 0, kT0);
  f.op("/a", "u2", "two", 0, kT0 + 1);
  f.seen["/a"] = SeenState{7, 1, false, kT0 + 2};
  f.in_snapshot("/a", "u1", "one", 6);
  f.taken.snapshot.sequence = 7;
  BOOST_TEST(f.run(7) == 1u);
}

BOOST_AUTO_TEST_CASE(a_seen_key_missing_is_lost_unless_deleted_or_expired_later) {
  Fixture lost;
  lost.op("/a", "u1", "one", 0, kT0);
  lost.seen["/a"] = SeenState{5, 0, false, kT0 + 1};
  lost.taken.snapshot.sequence = 5;
  BOOST_TEST(lost.run(5) == 1u);

  Fixture deleted;
  deleted.op("/a", "u1", "one", 0, kT0);
  deleted.op("/a", "u2", "", 0, kT0 + 1);  // a delete the reader did not see
  deleted.seen["/a"] = SeenState{5, 0, false, kT0 + 1};
  deleted.taken.snapshot.sequence = 6;
  BOOST_TEST(deleted.run(5) == 0u);

  Fixture expired;
  // ttl 2 s, long before the snapshot; seen before the last restart, so
  // its expiry may have been published while nobody listened.
  expired.op("/a", "u1", "one", 2, kT0 - 500);
  expired.seen["/a"] = SeenState{5, 0, false, kT0 - 400};
  expired.taken.snapshot.sequence = 6;
  BOOST_TEST(expired.run(5) == 0u);
}

BOOST_AUTO_TEST_CASE(snapshot_sequence_below_a_seen_kvpub_is_reported) {
  Fixture f;
  f.op("/a", "u1", "one", 0, kT0);
  f.seen["/a"] = SeenState{9, 0, false, kT0 + 1};
  f.in_snapshot("/a", "u1", "one", 9);
  f.taken.snapshot.sequence = 9;
  BOOST_TEST(f.run(12) == 1u);
}

BOOST_AUTO_TEST_CASE(a_changed_body_or_sequence_is_reported) {
  Fixture body;
  body.op("/a", "u1", "one", 0, kT0);
  body.seen["/a"] = SeenState{3, 0, false, kT0 + 1};
  body.in_snapshot("/a", "u1", "ONE", 3);
  BOOST_TEST(body.run(3) == 1u);

  Fixture seq;
  seq.op("/a", "u1", "one", 0, kT0);
  seq.seen["/a"] = SeenState{3, 0, false, kT0 + 1};
  seq.in_snapshot("/a", "u1", "one", 4);
  BOOST_TEST(seq.run(3) == 1u);
  seq.ctx.ha = true;  // a new active re-applying a pending set moves it up
  Violations again;
  verify_chp(seq.taken, seq.seen, 3, seq.history, seq.ctx, again);
  BOOST_TEST(again.count() == 0u);
}

// After a partition both members applied (and published) the same op, at
// unrelated sequences: the snapshot may hold it at a lower one than the
// reader last saw; an older op is still a lost update.
BOOST_AUTO_TEST_CASE(after_a_partition_the_same_op_at_a_lower_sequence_passes_an_older_op_does_not) {
  Fixture f;
  f.op("/a", "u1", "one", 0, kT0);
  f.op("/a", "u2", "two", 0, kT0 + 1);
  f.seen["/a"] = SeenState{900, 1, false, kT0 + 2};
  f.in_snapshot("/a", "u2", "two", 500);
  f.ctx.ha = true;
  BOOST_TEST(f.run(900) == 2u);  // sequence changed, and the snapshot is below what was seen
  Fixture p;
  p.op("/a", "u1", "one", 0, kT0);
  p.op("/a", "u2", "two", 0, kT0 + 1);
  p.seen["/a"] = SeenState{900, 1, false, kT0 + 2};
  p.in_snapshot("/a", "u2", "two", 500);
  p.in_snapshot("/b", "u3", "x", 1000);  // the snapshot itself is above every sequence seen
  p.op("/b", "u3", "x", 0, kT0);
  p.ctx.ha = true;
  p.ctx.partition = true;
  BOOST_TEST(p.run(900) == 0u);
  p.in_snapshot("/a", "u1", "one", 1001);
  BOOST_TEST(p.run(900) == 1u);  // lost update
}

BOOST_AUTO_TEST_CASE(ttl_keys_must_be_gone_and_their_expiry_published) {
  Fixture present;
  present.op("/t", "u1", "one", 1, kT0);  // expired at kT0 + 1 s, snapshot at + 10 s
  present.in_snapshot("/t", "u1", "one", 2);
  BOOST_TEST(present.run(2) == 1u);

  Fixture young;
  young.op("/t", "u1", "one", 60, kT0);
  young.in_snapshot("/t", "u1", "one", 2);
  BOOST_TEST(young.run(2) == 0u);

  // Seen set while the server was up, deadline long before the kill, no
  // delete seen: the expiry was not published.
  Fixture unpublished;
  unpublished.op("/t", "u1", "one", 1, kT0 + 100);
  unpublished.seen["/t"] = SeenState{2, 0, false, kT0 + 101};
  unpublished.taken.snapshot.sequence = 3;
  BOOST_TEST(unpublished.run(2) == 1u);

  Fixture published;
  published.op("/t", "u1", "one", 1, kT0 + 100);
  published.seen["/t"] = SeenState{3, 0, true, kT0 + 101};
  published.taken.snapshot.sequence = 3;
  BOOST_TEST(published.run(3) == 0u);
  VerifyStats stats =
      verify_chp(published.taken, published.seen, 3, published.history, published.ctx, published.violations);
  BOOST_TEST(stats.ttl_published == 1u);
}

BOOST_AUTO_TEST_CASE(values_nobody_wrote_are_reported) {
  Fixture f;
  f.op("/a", "u1", "one", 0, kT0);
  f.in_snapshot("/a", "u-other", "one", 2);
  f.in_snapshot("/ghost", "u9", "boo", 3);
  BOOST_TEST(f.run(0) == 2u);
}
