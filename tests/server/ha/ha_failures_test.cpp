// Both members of a Binary Star pair fail, or the link between them is
// cut while both serve: nothing any client saw published is lost once both
// are back, and no sequence is reused or goes back (issue 15's scenario,
// scripted for every restart order and for a partition).
#include <signal.h>

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include <zmq_addon.hpp>

#include "protocol/byte_order.h"
#include "protocol/chp_codec.h"
#include "tests/support/chp_peer.h"
#include "tests/support/zstored_fixtures.h"

using namespace std::chrono_literals;
using zstore::testing::ChpPeer;
using zstore::testing::ChpSnapshot;
using zstore::testing::scaled;
using zstore::testing::TempDir;
using zstore::testing::wait_until;
using zstore::testing::Zstored;
namespace chp = zstore::protocol::chp;

namespace {

// The file whose presence makes both members drop their HA traffic
// (--ha-test-cut-file); a base of Pair so that it exists before the servers.
struct CutFile {
  TempDir cut_dir;
  std::string cut_file = (cut_dir.path() / "cut").string();
};

struct Pair : CutFile, zstore::testing::HaPair {
  // extra: flags of both members.
  explicit Pair(const std::vector<std::string>& extra = {}) : HaPair(flags(cut_file, extra)) {
    wait_active_and_synced();
  }
  static std::vector<std::string> flags(const std::string& cut_file, std::vector<std::string> extra) {
    extra.insert(extra.begin(), {"--ha-test-cut-file", cut_file});
    return extra;
  }

  // Sets each key on server (its collector only, as a client talking to
  // the active does) and returns the KVPUBs it published: what clients saw.
  std::map<std::string, chp::KvMsg> publish(Zstored& server, const std::map<std::string, std::string>& kvs) {
    ChpPeer peer(ctx, "tcp://127.0.0.1", server.chp_port());
    BOOST_REQUIRE(peer.wait_connected());
    std::map<std::string, chp::KvMsg> seen;
    for (const auto& [k, v] : kvs) {
      peer.set(k, v);
      auto kv = peer.wait_kvpub(k, scaled(5s));
      BOOST_REQUIRE_MESSAGE(kv, "no KVPUB for " + k);
      seen[k] = *kv;
    }
    return seen;
  }

  // Waits until server's snapshot holds every key of want with its value
  // (an empty value: the key is absent); returns that snapshot.
  std::optional<ChpSnapshot> wait_for(Zstored& server, const std::map<std::string, std::string>& want) {
    std::optional<ChpSnapshot> last;
    bool ok = wait_until(
        [&] {
          last = snapshot_from(server, 1s);
          if (!last) return false;
          for (const auto& [k, v] : want) {
            auto it = last->entries.find(k);
            if (v.empty() ? it != last->entries.end() : (it == last->entries.end() || it->second.body != v))
              return false;
          }
          return true;
        },
        20s);
    if (!ok && last) {
      std::string got;
      for (const auto& [k, kv] : last->entries) got += k + "=" + kv.body + " ";
      BOOST_TEST_MESSAGE("last snapshot: " + got);
    }
    return ok ? last : std::nullopt;
  }

  void cut(bool on) {
    if (on) {
      std::ofstream(cut_file) << "cut\n";
    } else {
      std::filesystem::remove(cut_file);
    }
  }
};

std::uint64_t max_seq(const std::map<std::string, chp::KvMsg>& seen) {
  std::uint64_t m = 0;
  for (const auto& [k, kv] : seen) m = std::max(m, kv.sequence);
  return m;
}

std::map<std::string, std::string> keys_b_to_j(const std::string& value) {
  std::map<std::string, std::string> kvs;
  for (char c = 'b'; c <= 'j'; ++c) kvs[std::string("/k/") + c] = value;
  return kvs;
}

enum class Order { kPrimaryFirst, kBackupFirst, kTogether };

// The scenario: /k/a confirmed by the primary, the primary killed,
// nine keys confirmed by the backup, the backup killed, both restarted.
void both_fail_then_restart(Order order) {
  Pair pair;
  auto a = pair.publish(pair.primary, {{"/k/a", "1"}});
  BOOST_REQUIRE(wait_until([&] { return pair.backup.log().find("HA follower: synced") != std::string::npos; }));
  pair.primary.kill(SIGKILL);
  pair.primary.wait_exit();
  BOOST_REQUIRE_MESSAGE(pair.snapshot_from(pair.backup, 10s), "backup did not take over");
  auto nine = pair.publish(pair.backup, keys_b_to_j("2"));
  std::uint64_t published = std::max(max_seq(a), max_seq(nine));
  pair.backup.kill(SIGKILL);
  pair.backup.wait_exit();

  Zstored* serving = nullptr;
  switch (order) {
    case Order::kPrimaryFirst:
      // The primary alone serves its old map after the peer timeout ...
      BOOST_REQUIRE(pair.primary.restart());
      BOOST_REQUIRE(pair.snapshot_from(pair.primary, 10s));
      BOOST_REQUIRE(pair.backup.restart());  // ... and takes over the nine once the backup is back
      serving = &pair.primary;
      break;
    case Order::kBackupFirst:
      BOOST_REQUIRE(pair.backup.restart());
      BOOST_REQUIRE(pair.primary.restart());
      serving = &pair.backup;  // the newer map serves
      break;
    case Order::kTogether:
      // Back to back, well within the peer timeout (the harness starts
      // children from this thread: they die with the thread that started them).
      BOOST_REQUIRE(pair.primary.restart());
      BOOST_REQUIRE(pair.backup.restart());
      serving = &pair.backup;
      break;
  }
  auto want = keys_b_to_j("2");
  want["/k/a"] = "1";
  auto snap = pair.wait_for(*serving, want);
  BOOST_REQUIRE_MESSAGE(snap, "a confirmed update was lost");
  BOOST_CHECK_GT(snap->sequence, published);
  for (const auto& [k, kv] : snap->entries) BOOST_CHECK_MESSAGE(kv.sequence <= snap->sequence, k);

  // The next update gets a sequence above everything ever published.
  auto z = pair.publish(*serving, {{"/k/z", "9"}});
  BOOST_CHECK_GT(z["/k/z"].sequence, published);
  BOOST_CHECK_GT(z["/k/z"].sequence, snap->sequence);
  want["/k/z"] = "9";
  BOOST_CHECK(pair.wait_for(*serving, want));
  // The other member follows the serving one with the whole map.
  Zstored& other = serving == &pair.primary ? pair.backup : pair.primary;
  BOOST_CHECK(wait_until([&] { return other.log().find("handed over") != std::string::npos; }, 20s));
}

}  // namespace

BOOST_AUTO_TEST_CASE(both_killed_primary_restarted_first_loses_nothing) {
  both_fail_then_restart(Order::kPrimaryFirst);
}

BOOST_AUTO_TEST_CASE(both_killed_backup_restarted_first_loses_nothing) { both_fail_then_restart(Order::kBackupFirst); }

BOOST_AUTO_TEST_CASE(both_killed_restarted_together_loses_nothing) { both_fail_then_restart(Order::kTogether); }

// The HA link is cut while both serve clients; each side publishes, and
// deletes, what the other never sees. Healed, the backup steps down and
// hands its side over before resyncing: everything either side published
// survives, the backup's delete included, and sequences never go back.
BOOST_AUTO_TEST_CASE(partition_with_both_active_then_healed_loses_nothing) {
  Pair pair;
  auto before = pair.publish(pair.primary, {{"/p/0", "x"}, {"/p/gone", "x"}});
  {
    // Passive: no snapshot. One request (a client's vote) for a second, not
    // a stream of them: with votes all along, one heartbeat late by the
    // peer timeout would rightly make the backup take over.
    ChpPeer probe(pair.ctx, "tcp://127.0.0.1", pair.backup.chp_port());
    BOOST_REQUIRE(!probe.snapshot("", 1s));
  }
  pair.cut(true);
  BOOST_REQUIRE_MESSAGE(pair.snapshot_from(pair.backup, 10s), "backup did not take over in the partition");
  auto p_side = pair.publish(pair.primary, {{"/p/a1", "P"}, {"/p/a2", "P"}});
  auto b_side = pair.publish(pair.backup, {{"/p/b1", "B"}, {"/p/b2", "B"}, {"/p/gone", ""}});
  BOOST_REQUIRE(pair.snapshot_from(pair.primary, 2s));  // both serve
  std::uint64_t published = std::max({max_seq(before), max_seq(p_side), max_seq(b_side)});
  pair.cut(false);

  std::map<std::string, std::string> want = {{"/p/0", "x"},  {"/p/a1", "P"}, {"/p/a2", "P"},
                                             {"/p/b1", "B"}, {"/p/b2", "B"}, {"/p/gone", ""}};
  auto snap = pair.wait_for(pair.primary, want);
  BOOST_REQUIRE_MESSAGE(snap, "an update of the partition was lost");
  BOOST_CHECK_GT(snap->sequence, published);
  auto after = pair.publish(pair.primary, {{"/p/after", "1"}});
  BOOST_CHECK_GT(after["/p/after"].sequence, published);
  // The backup resynced from the primary and does not serve.
  BOOST_CHECK(wait_until([&] { return pair.backup.log().find("handed over") != std::string::npos; }, 20s));
  ChpPeer probe(pair.ctx, "tcp://127.0.0.1", pair.backup.chp_port());
  BOOST_CHECK(!probe.snapshot("", 1s));
}

// A hand-over larger than the active's --receive-buffer-bytes fails and is
// retried (its failure logged once a minute): the active does not hold
// it, and the peer keeps its map (it does not resync), so what it
// published in the partition survives, as it serves again once the
// primary is gone.
BOOST_AUTO_TEST_CASE(a_hand_over_over_the_memory_budget_fails_and_the_peer_keeps_its_map) {
  Pair pair({"--receive-buffer-bytes", "65536"});
  pair.cut(true);
  BOOST_REQUIRE_MESSAGE(pair.snapshot_from(pair.backup, 10s), "backup did not take over in the partition");
  std::map<std::string, std::string> b_side;  // 100 KiB of values: more than the budget
  for (int i = 0; i < 100; ++i) b_side["/b/" + std::to_string(i)] = std::string(1024, static_cast<char>('a' + i % 26));
  pair.publish(pair.backup, b_side);
  auto follows = [&] {  // "HA: following the active ...": the passive replaces its map
    std::string log = pair.backup.log();
    std::size_t n = 0;
    for (auto at = log.find("following the active"); at != std::string::npos;
         at = log.find("following the active", at + 1)) {
      ++n;
    }
    return n;
  };
  std::size_t follows_before = follows();
  pair.cut(false);

  const std::string refused = "the peer's side of the hand-over exceeds --receive-buffer-bytes (65536 bytes)";
  auto hand_over_refused = [&] { return pair.primary.log().find(refused) != std::string::npos; };
  BOOST_REQUIRE_MESSAGE(wait_until(hand_over_refused, 20s), "the hand-over did not fail: " + pair.primary.log());
  std::this_thread::sleep_for(scaled(2500ms));   // a window of retries (every second) that must change nothing
  BOOST_CHECK_EQUAL(follows(), follows_before);  // the backup did not resync
  std::string log = pair.primary.log();          // logged once a minute, not at every retry
  BOOST_CHECK_EQUAL(log.find(refused), log.rfind(refused));

  pair.primary.kill(SIGKILL);
  pair.primary.wait_exit();
  BOOST_CHECK_MESSAGE(pair.wait_for(pair.backup, b_side), "the backup lost what it published in the partition");
}

// A client re-sends an update after a failover: both sides of a partition
// apply the same update (same UUID), the backup later and at a higher
// sequence. Healed, the primary must not keep its lower sequence for the
// key: a client of the backup saw the update at the backup's.
BOOST_AUTO_TEST_CASE(the_same_update_on_both_sides_keeps_the_later_sequence) {
  Pair pair;
  pair.cut(true);
  BOOST_REQUIRE_MESSAGE(pair.snapshot_from(pair.backup, 10s), "backup did not take over in the partition");
  chp::KvMsg update{"/p/same", 0, std::string(16, '\x5a'), "", "v"};
  auto publish_update = [&](Zstored& server) {
    ChpPeer peer(pair.ctx, "tcp://127.0.0.1", server.chp_port());
    BOOST_REQUIRE(peer.wait_connected());
    peer.send_collector(chp::encode_kvmsg(update));
    auto kv = peer.wait_kvpub(update.key, scaled(5s));
    BOOST_REQUIRE_MESSAGE(kv, "no KVPUB");
    return kv->sequence;
  };
  std::uint64_t on_primary = publish_update(pair.primary);
  std::uint64_t on_backup = publish_update(pair.backup);
  BOOST_REQUIRE_GT(on_backup, on_primary);  // the backup's epoch started later
  auto hand_overs = [&] {
    std::string log = pair.primary.log();
    std::size_t n = 0;
    for (auto at = log.find("took over"); at != std::string::npos; at = log.find("took over", at + 1)) ++n;
    return n;
  };
  std::size_t before = hand_overs();
  pair.cut(false);

  BOOST_REQUIRE_MESSAGE(wait_until([&] { return hand_overs() > before; }, 20s), "the primary took nothing over");
  auto snap = pair.wait_for(pair.primary, {{"/p/same", "v"}});
  BOOST_REQUIRE(snap);
  const chp::KvMsg& kv = snap->entries.at("/p/same");
  BOOST_CHECK_EQUAL(kv.uuid, update.uuid);
  BOOST_CHECK_MESSAGE(kv.sequence >= on_backup, "the key went back to seq " + std::to_string(kv.sequence) +
                                                    " after a client saw " + std::to_string(on_backup));
}

namespace {

// The sequence the latest "took over ... now at N" line of server's log names.
std::uint64_t handed_over_at(const Zstored& server) {
  std::string log = server.log();
  auto at = log.rfind("took over");
  if (at == std::string::npos) return 0;
  at = log.find("now at ", at);
  return at == std::string::npos ? 0 : std::stoull(log.substr(at + 7));
}

}  // namespace

// A hand-over of many keys runs over many loop turns while the active
// serves. A client's update of a key the peer also updated, applied before
// the hand-over reached that key, keeps the client's value: it is the
// later one.
BOOST_AUTO_TEST_CASE(a_client_update_during_a_long_hand_over_stands) {
  Pair pair;
  pair.cut(true);
  BOOST_REQUIRE_MESSAGE(pair.snapshot_from(pair.backup, 10s), "backup did not take over in the partition");
  constexpr int kKeys = 200'000;
  auto key = [](int i) {
    char k[16];
    std::snprintf(k, sizeof k, "/h/%06d", i);
    return std::string(k);
  };
  {
    ChpPeer writer(pair.ctx, "tcp://127.0.0.1", pair.backup.chp_port());
    BOOST_REQUIRE(writer.wait_connected());
    for (int i = 0; i < kKeys; i += 500) {  // in rounds: a PUB drops what its queue cannot hold
      for (int j = i; j < i + 500; ++j) writer.set(key(j), "peer");
      BOOST_REQUIRE_MESSAGE(writer.wait_kvpub(key(i + 499), scaled(10s)), "the backup did not publish " + key(i + 499));
    }
  }
  ChpPeer client(pair.ctx, "tcp://127.0.0.1", pair.primary.chp_port());
  BOOST_REQUIRE(client.wait_connected());
  // Only the first key the hand-over applies, the last one it weighs, and
  // a probe (the hand-over publishes 200k KVPUBs: a SUB of all would drop).
  const std::string last = key(kKeys - 1);
  const std::string probe = "/probe";
  zmq::socket_t watch(pair.ctx, zmq::socket_type::sub);
  for (const auto& k : {key(0), last, probe}) watch.set(zmq::sockopt::subscribe, k);
  watch.connect("tcp://127.0.0.1:" + std::to_string(pair.primary.chp_port() + 1));
  auto next_kvpub = [&](std::chrono::milliseconds timeout) -> std::optional<chp::KvMsg> {
    std::vector<zmq::message_t> parts;
    zmq::pollitem_t item{watch.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, timeout) <= 0 || !zmq::recv_multipart(watch, std::back_inserter(parts))) return {};
    if (parts.size() != 5 || parts[1].size() != 8) return chp::KvMsg{};
    return chp::KvMsg{parts[0].to_string(), zstore::protocol::get_be<std::uint64_t>(parts[1].to_string_view()),
                      parts[2].to_string(), parts[3].to_string(), parts[4].to_string()};
  };
  auto wait_for_kvpub = [&](const std::string& k, const std::string& body) -> std::optional<chp::KvMsg> {
    auto deadline = std::chrono::steady_clock::now() + scaled(30s);
    while (std::chrono::steady_clock::now() < deadline) {
      if (k == probe) client.set(probe, body);
      auto kv = next_kvpub(100ms);
      if (kv && kv->key == k && kv->body == body) return kv;
    }
    return std::nullopt;
  };
  BOOST_REQUIRE_MESSAGE(wait_for_kvpub(probe, "1"), "the watching subscriber did not connect");
  pair.cut(false);

  // A client updates the last key once the hand-over has applied its first
  // part (its own history read, the peer's first keys weighed).
  BOOST_REQUIRE_MESSAGE(wait_for_kvpub(key(0), "peer"), "the hand-over did not start");
  client.set(last, "client");
  auto kv = wait_for_kvpub(last, "client");
  BOOST_REQUIRE_MESSAGE(kv, "the primary did not publish the client's update during the hand-over");
  BOOST_REQUIRE(wait_until([&] { return handed_over_at(pair.primary) > kv->sequence; }, 30s));

  // Subtree snapshots of the two keys (the whole map takes long to send).
  auto value_of = [&](const std::string& k) -> std::string {
    auto snap = client.snapshot(k, scaled(10s));
    if (!snap) return "(no snapshot)";
    auto it = snap->entries.find(k);
    return it == snap->entries.end() ? "(absent)" : it->second.body;
  };
  BOOST_CHECK_EQUAL(value_of(key(0)), "peer");
  BOOST_CHECK_MESSAGE(value_of(last) == "client", "the hand-over put the peer's older value over the client's update");
}
