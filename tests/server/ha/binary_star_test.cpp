#include "server/ha/binary_star.h"

#include <boost/test/unit_test.hpp>

using namespace std::chrono_literals;
using zstore::server::BinaryStar;
using zstore::server::HaState;
using Clock = BinaryStar::Clock;

namespace {
const auto t0 = Clock::time_point{} + 1h;
std::string_view reason;
}  // namespace

BOOST_AUTO_TEST_CASE(state_digits_parse_and_reject_garbage) {
  BOOST_CHECK(zstore::server::parse_ha_state("3") == HaState::kActive);
  BOOST_CHECK(!zstore::server::parse_ha_state("5"));
  BOOST_CHECK(!zstore::server::parse_ha_state("0"));
  BOOST_CHECK(!zstore::server::parse_ha_state("33"));
  BOOST_CHECK(!zstore::server::parse_ha_state(""));
}

BOOST_AUTO_TEST_CASE(fresh_pair_primary_becomes_active_and_backup_passive) {
  BinaryStar primary(HaState::kPrimary, 2s, t0);
  BinaryStar backup(HaState::kBackup, 2s, t0);
  BOOST_CHECK(primary.on_peer_state(backup.state(), {}, {}, t0) == HaState::kActive);
  BOOST_CHECK(backup.on_peer_state(primary.state(), {}, {}, t0) == HaState::kPassive);
  BOOST_CHECK(primary.on_client_vote(true, t0, &reason));
  BOOST_CHECK(!backup.on_client_vote(true, t0, &reason));
}

BOOST_AUTO_TEST_CASE(passive_takes_over_only_when_peer_dead_and_a_client_votes) {
  BinaryStar backup(HaState::kBackup, 2s, t0);
  backup.on_peer_state(HaState::kActive, {}, {}, t0);
  BOOST_CHECK(!backup.on_client_vote(true, t0 + 1s, &reason));  // peer alive
  BOOST_CHECK(backup.state() == HaState::kPassive);
  BOOST_CHECK(!backup.peer_alive(t0 + 3s));  // peer dead, yet without a vote nothing changes
  BOOST_CHECK(backup.state() == HaState::kPassive);
  BOOST_CHECK(backup.on_client_vote(true, t0 + 3s, &reason));
  BOOST_CHECK(backup.state() == HaState::kActive);
}

BOOST_AUTO_TEST_CASE(passive_that_never_synced_refuses_to_take_over) {
  BinaryStar backup(HaState::kBackup, 2s, t0);
  backup.on_peer_state(HaState::kActive, {}, {}, t0);
  BOOST_CHECK(!backup.on_client_vote(false, t0 + 10s, &reason));
  BOOST_CHECK(backup.state() == HaState::kPassive);
  BOOST_CHECK(reason.find("never completed a sync") != std::string_view::npos);
}

BOOST_AUTO_TEST_CASE(backup_alone_never_serves) {
  BinaryStar backup(HaState::kBackup, 2s, t0);
  BOOST_CHECK(!backup.on_client_vote(true, t0 + 60s, &reason));
  BOOST_CHECK(backup.state() == HaState::kBackup);
}

BOOST_AUTO_TEST_CASE(restarted_primary_waits_then_follows_active_backup) {
  BinaryStar primary(HaState::kPrimary, 2s, t0);
  BOOST_CHECK(!primary.on_client_vote(true, t0 + 1s, &reason));  // not yet heard the peer
  BOOST_CHECK(primary.on_peer_state(HaState::kActive, {}, {}, t0 + 1500ms) == HaState::kPassive);
  BOOST_CHECK(!primary.on_client_vote(true, t0 + 2s, &reason));
}

BOOST_AUTO_TEST_CASE(primary_alone_serves_after_peer_timeout) {
  BinaryStar primary(HaState::kPrimary, 2s, t0);
  BOOST_CHECK(!primary.on_client_vote(true, t0 + 1s, &reason));
  BOOST_CHECK(primary.on_client_vote(true, t0 + 2s, &reason));
  BOOST_CHECK(primary.state() == HaState::kActive);
}

BOOST_AUTO_TEST_CASE(passive_becomes_active_when_peer_restarts) {
  BinaryStar p(HaState::kPrimary, 2s, t0);
  p.on_peer_state(HaState::kActive, {}, {}, t0);
  BOOST_CHECK(p.on_peer_state(HaState::kBackup, {}, {}, t0 + 5s) == HaState::kActive);
}

BOOST_AUTO_TEST_CASE(dual_active_backup_steps_down_primary_stays) {
  BinaryStar primary(HaState::kPrimary, 2s, t0);
  BinaryStar backup(HaState::kBackup, 2s, t0);
  primary.on_peer_state(HaState::kBackup, {}, {}, t0);
  backup.on_peer_state(HaState::kActive, {}, {}, t0);
  backup.on_client_vote(true, t0 + 3s, &reason);  // partition: backup took over
  BOOST_REQUIRE(backup.active());
  BOOST_CHECK(primary.on_peer_state(HaState::kActive, {}, {}, t0 + 4s) == HaState::kActive);
  BOOST_CHECK(backup.on_peer_state(HaState::kActive, {}, {}, t0 + 4s) == HaState::kPassive);
}

// Both members restarting (after both failed): the newer map serves, in
// whichever order they hear each other, and an incomplete map never does.
BOOST_AUTO_TEST_CASE(starting_pair_elects_the_newer_map) {
  using zstore::server::MapFacts;
  MapFacts older{true, 100}, newer{true, 5000};
  BinaryStar primary(HaState::kPrimary, 2s, t0);
  BinaryStar backup(HaState::kBackup, 2s, t0);
  BOOST_CHECK(primary.on_peer_state(HaState::kBackup, newer, older, t0) == HaState::kPrimary);
  BOOST_CHECK(backup.on_peer_state(HaState::kPrimary, older, newer, t0) == HaState::kActive);
  BOOST_CHECK(primary.on_peer_state(HaState::kActive, newer, older, t0) == HaState::kPassive);
  // Equal maps: the primary, as before.
  BinaryStar p2(HaState::kPrimary, 2s, t0);
  BinaryStar b2(HaState::kBackup, 2s, t0);
  BOOST_CHECK(p2.on_peer_state(HaState::kBackup, newer, newer, t0) == HaState::kActive);
  BOOST_CHECK(b2.on_peer_state(HaState::kPrimary, newer, newer, t0) == HaState::kBackup);
  // A higher last sequence loses to a complete map.
  BinaryStar p3(HaState::kPrimary, 2s, t0);
  BOOST_CHECK(p3.on_peer_state(HaState::kBackup, MapFacts{false, 9000}, older, t0) == HaState::kActive);
  BinaryStar b3(HaState::kBackup, 2s, t0);
  BOOST_CHECK(b3.on_peer_state(HaState::kPrimary, older, MapFacts{false, 9000}, t0) == HaState::kBackup);
}

// A passive that has not finished loading its snapshot hears its peer
// restart: it must not take over with the partial map (the restarted peer,
// with the complete one, does).
BOOST_AUTO_TEST_CASE(unsynced_passive_never_takes_over_from_a_restarted_peer) {
  using zstore::server::MapFacts;
  BinaryStar backup(HaState::kBackup, 2s, t0);
  backup.on_peer_state(HaState::kActive, {}, {}, t0);
  BOOST_CHECK(backup.on_peer_state(HaState::kPrimary, MapFacts{true, 10}, MapFacts{false, 5}, t0 + 5s) ==
              HaState::kPassive);
  BinaryStar primary(HaState::kPrimary, 2s, t0);
  BOOST_CHECK(primary.on_peer_state(HaState::kPassive, MapFacts{false, 5}, MapFacts{true, 10}, t0) == HaState::kActive);
  // A synced passive takes over; the restarted primary then follows it.
  BinaryStar b2(HaState::kBackup, 2s, t0);
  b2.on_peer_state(HaState::kActive, {}, {}, t0);
  BOOST_CHECK(b2.on_peer_state(HaState::kPrimary, MapFacts{true, 10}, MapFacts{true, 5}, t0 + 5s) == HaState::kActive);
  BinaryStar p2(HaState::kPrimary, 2s, t0);
  BOOST_CHECK(p2.on_peer_state(HaState::kPassive, MapFacts{true, 5}, MapFacts{true, 10}, t0) == HaState::kPrimary);
}

BOOST_AUTO_TEST_CASE(dual_passives_elect_the_newer_complete_map) {
  using zstore::server::MapFacts;
  BinaryStar primary(HaState::kPrimary, 2s, t0);
  BinaryStar backup(HaState::kBackup, 2s, t0);
  primary.on_peer_state(HaState::kActive, {}, {}, t0);
  backup.on_peer_state(HaState::kActive, {}, {}, t0);
  BOOST_CHECK(primary.on_peer_state(HaState::kPassive, MapFacts{true, 50}, MapFacts{true, 40}, t0) ==
              HaState::kPassive);
  BOOST_CHECK(backup.on_peer_state(HaState::kPassive, MapFacts{true, 40}, MapFacts{true, 50}, t0) == HaState::kActive);
}

BOOST_AUTO_TEST_CASE(primary_alone_with_an_incomplete_map_refuses_votes) {
  BinaryStar primary(HaState::kPrimary, 2s, t0);
  BOOST_CHECK(!primary.on_client_vote(false, t0 + 5s, &reason));
  BOOST_CHECK(primary.state() == HaState::kPrimary);
}
