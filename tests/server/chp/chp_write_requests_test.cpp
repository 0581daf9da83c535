// ChpWriteRequests' memory of applied writes: a retry of a remembered UUID
// gets its first outcome; only the last `remembered` are kept, oldest out.
#include <boost/test/unit_test.hpp>

#include <span>
#include <string>
#include <vector>

#include "server/chp/chp_write_requests.h"
#include "tests/storage/chp/chp_store_fixture.h"
#include "tests/support/test_support.h"

using zstore::server::ChpWriteRequests;

namespace {

std::string uuid(char c) { return std::string(16, c); }

}  // namespace

BOOST_AUTO_TEST_CASE(a_remembered_write_is_answered_with_its_first_sequence) {
  ChpWriteRequests requests(4);
  requests.remember_applied(uuid('a'), 7);
  requests.remember_applied(uuid('a'), 9);  // a second note of the same write changes nothing
  auto earlier = requests.earlier(uuid('a'));
  BOOST_REQUIRE(earlier);
  BOOST_TEST(std::string(to_string(earlier->kind)) == "applied");
  BOOST_TEST(earlier->uuid == uuid('a'));
  BOOST_TEST(earlier->sequence == 7u);
  BOOST_TEST(!requests.earlier(uuid('b')));
  BOOST_TEST(!requests.earlier("short"));
}

BOOST_AUTO_TEST_CASE(only_the_last_remembered_writes_are_kept_oldest_first_out) {
  ChpWriteRequests requests(3);
  for (char c = 'a'; c <= 'f'; ++c) requests.remember_applied(uuid(c), static_cast<std::uint64_t>(c));
  for (char c = 'a'; c <= 'c'; ++c) BOOST_TEST(!requests.earlier(uuid(c)), c);
  for (char c = 'd'; c <= 'f'; ++c) {
    auto earlier = requests.earlier(uuid(c));
    BOOST_REQUIRE(earlier);
    BOOST_TEST(earlier->sequence == static_cast<std::uint64_t>(c));
  }
}

BOOST_AUTO_TEST_CASE(nothing_is_remembered_with_a_memory_of_zero) {
  ChpWriteRequests requests(0);
  requests.remember_applied(uuid('a'), 1);
  BOOST_TEST(!requests.earlier(uuid('a')));
}

// Groups one after the other on the same request slots: each group knows
// only its own keys, each precondition is judged against the store, and a
// slot's buffers from an earlier group never leak into a later write.
BOOST_AUTO_TEST_CASE(groups_reuse_their_slots_and_know_only_their_own_keys) {
  using zstore::protocol::chp::Precondition;
  using Kind = zstore::protocol::chp::WriteOutcome::Kind;
  zstore::testing::TempDir dir;
  auto o = chp_store_fixture::open_store(dir.str());
  ChpWriteRequests requests(16);
  std::vector<zstore::storage::ChpWrite> writes;
  for (int group = 0; group < 3; ++group) {
    for (int k = 0; k < 100; ++k) {
      std::string key = "/k" + std::to_string(k);
      BOOST_REQUIRE(!requests.has_key(key));
      Precondition p;
      if (group == 0) p.kind = Precondition::Kind::kAbsent;
      if (group > 0) p = {Precondition::Kind::kSequence, o->last_sequence() - 99 + static_cast<std::uint64_t>(k)};
      if (group == 2 && k % 2 == 1) p.sequence = 1;  // stale: refused
      auto& w = requests.add("id" + std::to_string(k), key, p);
      w.uuid.assign(uuid(static_cast<char>('a' + group)));
      w.uuid.back() = static_cast<char>(k);
      w.value.assign(group == 0 ? std::string(300, 'x') : "v" + std::to_string(group));
      w.properties.clear();
      w.sequence = 0;
      w.expires_at_ms = 0;
      BOOST_REQUIRE(requests.has_key(key));
    }
    BOOST_REQUIRE(!requests.has_key("/other"));
    std::vector<ChpWriteRequests::Reply> replies;
    std::size_t n = requests.decide(*o, 0, &writes, &replies);
    BOOST_TEST(requests.empty());
    BOOST_TEST(n == (group == 2 ? 50u : 100u));
    BOOST_TEST(replies.size() == 100u - n);
    for (const auto& r : replies) BOOST_TEST((r.outcome.kind == Kind::kRefused), r.identity);
    std::span<zstore::storage::ChpWrite> group_writes(writes.data(), n);
    BOOST_REQUIRE(o->apply(group_writes).ok());
    auto applied = requests.applied(group_writes);
    BOOST_REQUIRE_EQUAL(applied.size(), n);
    for (std::size_t i = 0; i < n; ++i) {
      BOOST_TEST(applied[i].outcome.sequence == writes[i].sequence);
      BOOST_TEST(writes[i].value == (group == 0 ? std::string(300, 'x') : "v" + std::to_string(group)));
    }
  }
  zstore::storage::ChpEntry entry;
  bool found = false;
  BOOST_REQUIRE(o->get("/k0", &entry, &found).ok() && found);
  BOOST_TEST(entry.value == "v2");
  BOOST_REQUIRE(o->get("/k1", &entry, &found).ok() && found);
  BOOST_TEST(entry.value == "v1");  // group 2's stale write of it was refused
}
