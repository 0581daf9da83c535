#include "client/local_map.h"

#include <boost/test/unit_test.hpp>

namespace chp = zstore::protocol::chp;
using zstore::client::ChangeSource;
using zstore::client::LocalMap;

namespace {

std::map<std::string, chp::KvMsg> entries(std::initializer_list<std::pair<const char*, const char*>> kv,
                                          std::uint64_t seq = 1) {
  std::map<std::string, chp::KvMsg> out;
  for (const auto& [k, v] : kv) out[k] = chp::KvMsg{k, seq, "", "", v};
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(first_snapshot_reports_every_entry) {
  LocalMap map;
  auto changes = map.replace(entries({{"a", "1"}, {"b", "2"}}), 5, ChangeSource::kInitialSnapshot);
  BOOST_CHECK_EQUAL(changes.size(), 2u);
  BOOST_CHECK_EQUAL(map.sequence(), 5u);
  BOOST_CHECK(map.get("a") == std::optional<std::string>("1"));
}

BOOST_AUTO_TEST_CASE(snapshot_replaces_and_reports_only_differences) {
  LocalMap map;
  (void)map.replace(entries({{"a", "1"}, {"b", "2"}, {"same", "s"}}), 5, ChangeSource::kInitialSnapshot);
  auto changes = map.replace(entries({{"b", "2x"}, {"c", "3"}, {"same", "s"}}), 9, ChangeSource::kResync);
  BOOST_REQUIRE_EQUAL(changes.size(), 3u);
  BOOST_CHECK_EQUAL(changes[0].key, "b");
  BOOST_CHECK_EQUAL(changes[1].key, "c");
  BOOST_CHECK_EQUAL(changes[2].key, "a");
  BOOST_CHECK(changes[2].deleted);
  BOOST_CHECK_EQUAL(changes[2].sequence, 9u);
  for (const auto& c : changes) BOOST_CHECK(c.source == ChangeSource::kResync);
  BOOST_CHECK(!map.get("a"));
  BOOST_CHECK_EQUAL(map.size(), 3u);
}

BOOST_AUTO_TEST_CASE(snapshot_may_lower_the_sequence) {
  LocalMap map;
  (void)map.replace({}, 100, ChangeSource::kInitialSnapshot);
  (void)map.replace({}, 3, ChangeSource::kResync);  // e.g. a backup behind the primary
  BOOST_CHECK_EQUAL(map.sequence(), 3u);
  BOOST_CHECK(map.apply({"k", 4, "", "", "v"}).outcome == LocalMap::Outcome::kApplied);
}

BOOST_AUTO_TEST_CASE(snapshot_entries_with_empty_values_are_absent) {
  LocalMap map;
  auto changes = map.replace(entries({{"a", ""}, {"b", "2"}}), 1, ChangeSource::kInitialSnapshot);
  BOOST_CHECK_EQUAL(changes.size(), 1u);
  BOOST_CHECK(!map.get("a"));
}

BOOST_AUTO_TEST_CASE(updates_apply_only_above_the_last_sequence) {
  LocalMap map;
  (void)map.replace({}, 10, ChangeSource::kInitialSnapshot);
  BOOST_CHECK(map.apply({"k", 10, "", "", "eq"}).outcome == LocalMap::Outcome::kStale);
  BOOST_CHECK(map.apply({"k", 9, "", "", "lt"}).outcome == LocalMap::Outcome::kStale);
  auto ok = map.apply({"k", 11, "", "ttl=5\n", "v"});
  BOOST_CHECK(ok.outcome == LocalMap::Outcome::kApplied);
  BOOST_REQUIRE(ok.change);
  BOOST_CHECK_EQUAL(ok.change->properties, "ttl=5\n");
  BOOST_CHECK(ok.change->source == ChangeSource::kUpdate);
  BOOST_CHECK(map.apply({"k", 11, "", "", "dup"}).outcome == LocalMap::Outcome::kStale);
  BOOST_CHECK(map.get("k") == std::optional<std::string>("v"));
  BOOST_CHECK_EQUAL(map.sequence(), 11u);
}

BOOST_AUTO_TEST_CASE(delete_of_an_absent_key_advances_the_sequence_silently) {
  LocalMap map;
  auto r = map.apply({"nope", 1, "", "", ""});
  BOOST_CHECK(r.outcome == LocalMap::Outcome::kApplied);
  BOOST_CHECK(!r.change);
  BOOST_CHECK_EQUAL(map.sequence(), 1u);
  (void)map.apply({"k", 2, "", "", "v"});
  auto del = map.apply({"k", 3, "", "", ""});
  BOOST_REQUIRE(del.change);
  BOOST_CHECK(del.change->deleted);
  BOOST_CHECK(map.values().empty());
}
