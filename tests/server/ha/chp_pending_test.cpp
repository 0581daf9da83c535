// PendingList: a passive's client updates not yet republished by the active.
#include <boost/test/unit_test.hpp>

#include "server/ha/chp_pending.h"

using zstore::server::PendingList;
using zstore::storage::ChpWrite;

namespace {

ChpWrite write(const std::string& key, const std::string& uuid, const std::string& value = "v") {
  ChpWrite w;
  w.key = key;
  w.uuid = uuid;
  w.value = value;
  w.sequence = 7;
  return w;
}

std::vector<std::string> uuids(const std::vector<ChpWrite>& writes) {
  std::vector<std::string> out;
  for (const auto& w : writes) out.push_back(w.uuid);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(take_all_returns_arrival_order_without_sequences) {
  PendingList p;
  p.add(write("a", "u1"));
  p.add(write("b", "u2"));
  auto all = p.take_all();
  BOOST_CHECK((uuids(all) == std::vector<std::string>{"u1", "u2"}));
  BOOST_CHECK_EQUAL(all[0].sequence, 0u);
  BOOST_CHECK_EQUAL(p.size(), 0u);
}

BOOST_AUTO_TEST_CASE(republished_uuid_is_forgotten_and_a_late_copy_ignored) {
  PendingList p;
  p.add(write("a", "u1"));
  p.seen_from_active("u1");
  BOOST_CHECK_EQUAL(p.size(), 0u);
  p.add(write("a", "u1"));  // the KVSET reached us after its KVPUB
  BOOST_CHECK_EQUAL(p.size(), 0u);
}

BOOST_AUTO_TEST_CASE(drop_received_before_forgets_only_older_updates) {
  PendingList p;
  p.add(write("a", "u1"));
  p.add(write("b", "u2"));
  p.add(write("c", "u3"));
  auto mark = p.mark();
  p.add(write("d", "u4"));
  p.add(write("a", "u1", "again"));  // same uuid after the mark: the newer copy is kept
  BOOST_CHECK_EQUAL(p.drop_received_before(mark), 2u);
  auto all = p.take_all();
  BOOST_REQUIRE((uuids(all) == std::vector<std::string>{"u4", "u1"}));
  BOOST_CHECK_EQUAL(all[1].value, "again");
}

BOOST_AUTO_TEST_CASE(drop_received_before_keeps_the_uuid_index_consistent) {
  PendingList p;
  p.add(write("a", "u1"));
  auto mark = p.mark();
  BOOST_CHECK_EQUAL(p.drop_received_before(mark), 1u);
  p.seen_from_active("u1");  // must not touch the dropped entry
  p.add(write("b", "u2"));
  BOOST_CHECK_EQUAL(p.size(), 1u);
  BOOST_CHECK_EQUAL(p.drop_received_before(mark), 0u);
}

BOOST_AUTO_TEST_CASE(bounded_list_drops_the_oldest) {
  PendingList p(2);
  p.add(write("a", "u1"));
  p.add(write("b", "u2"));
  p.add(write("c", "u3"));
  BOOST_CHECK_EQUAL(p.dropped(), 1u);
  BOOST_CHECK((uuids(p.take_all()) == std::vector<std::string>{"u2", "u3"}));
}

// The active lost u1 (its publisher dropped it while reconnecting) but
// published u2, a later update of the same key: u1 must not be applied at
// takeover over u2. Other keys' updates stay pending.
BOOST_AUTO_TEST_CASE(published_update_supersedes_older_pending_updates_of_its_key) {
  PendingList p;
  p.add(write("a", "u1", "old"));
  p.add(write("b", "u2"));
  p.add(write("a", "u3", "new"));
  p.add(write("a", "u4", "newer"));
  p.seen_from_active("u3");
  BOOST_CHECK_EQUAL(p.superseded(), 1u);
  BOOST_CHECK((uuids(p.take_all()) == std::vector<std::string>{"u2", "u4"}));
}

// The same when the KVPUB reaches us before the KVSET it republishes.
BOOST_AUTO_TEST_CASE(late_kvset_of_a_published_update_supersedes_older_pending_ones) {
  PendingList p;
  p.add(write("a", "u1", "old"));
  p.add(write("b", "u2"));
  p.seen_from_active("u3");
  p.add(write("a", "u3", "new"));
  p.add(write("a", "u4", "newer"));
  BOOST_CHECK_EQUAL(p.size(), 2u);
  BOOST_CHECK((uuids(p.take_all()) == std::vector<std::string>{"u2", "u4"}));
}

BOOST_AUTO_TEST_CASE(superseding_keeps_the_indexes_consistent) {
  PendingList p(3);
  p.add(write("a", "u1"));
  p.add(write("a", "u2"));
  p.seen_from_active("u2");  // drops u1 too
  p.add(write("a", "u3"));
  p.add(write("a", "u3", "again"));  // same uuid: the newer copy replaces it
  p.add(write("b", "u4"));
  p.add(write("c", "u5"));
  p.add(write("d", "u6"));  // bound 3: u3 goes
  BOOST_CHECK_EQUAL(p.dropped(), 1u);
  p.seen_from_active("u3");  // already gone: nothing else may go
  BOOST_CHECK((uuids(p.take_all()) == std::vector<std::string>{"u4", "u5", "u6"}));
}

BOOST_AUTO_TEST_CASE(past_its_byte_budget_the_oldest_updates_are_dropped) {
  PendingList p(1'000'000, 1'000'000, 3000);  // three updates of 1000 bytes: 2-byte key and UUID, 996-byte value
  for (int i = 0; i < 5; ++i) p.add(write("k" + std::to_string(i), "u" + std::to_string(i), std::string(996, 'x')));
  BOOST_CHECK_EQUAL(p.size(), 3u);
  BOOST_CHECK_EQUAL(p.dropped(), 2u);
  BOOST_CHECK_EQUAL(p.bytes(), 3000u);
  BOOST_CHECK(uuids(p.take_all()) == (std::vector<std::string>{"u2", "u3", "u4"}));
  BOOST_CHECK_EQUAL(p.bytes(), 0u);
}

BOOST_AUTO_TEST_CASE(one_update_larger_than_the_budget_is_still_kept) {
  PendingList p(1'000'000, 1'000'000, 100);
  p.add(write("a", "u1"));
  p.add(write("b", "u2", std::string(500, 'x')));
  BOOST_CHECK(uuids(p.take_all()) == (std::vector<std::string>{"u2"}));
}
