// Conformance of zstored to CHP (rfc 12) from the spec alone, plus the
// durability promises: sequences survive restarts, nothing published is
// lost to SIGKILL, TTLs are absolute and survive restarts.
#include <signal.h>

#include <boost/test/unit_test.hpp>

#include <map>
#include <thread>

#include "protocol/byte_order.h"
#include "protocol/chp_codec.h"
#include "tests/support/chp_peer.h"
#include "tests/support/zstored_fixtures.h"

using namespace std::chrono_literals;
using zstore::testing::ChpPeer;
using Server = zstore::testing::ZstoredServer;
namespace chp = zstore::protocol::chp;

BOOST_AUTO_TEST_CASE(snapshot_returns_all_keys_and_kthxbai_carries_sequence_and_subtree) {
  Server s;
  auto p = s.peer();
  p->set("/a/1", "one");
  p->set("/a/2", "two");
  p->set("/b/1", "three");
  BOOST_REQUIRE(p->wait_kvpub("/b/1", 5s));

  auto all = p->snapshot("");
  BOOST_REQUIRE(all);
  BOOST_CHECK_EQUAL(all->entries.count("/a/1"), 1u);
  BOOST_CHECK_EQUAL(all->entries.count("/b/1"), 1u);
  BOOST_CHECK_EQUAL(all->entries.at("/a/2").body, "two");

  auto sub = p->snapshot("/a/");
  BOOST_REQUIRE(sub);
  BOOST_CHECK_EQUAL(sub->entries.size(), 2u);
  BOOST_CHECK_EQUAL(sub->subtree, "/a/");
  BOOST_CHECK_EQUAL(sub->sequence, all->sequence);
  std::uint64_t highest = 0;
  for (const auto& [k, v] : all->entries) highest = std::max(highest, v.sequence);
  BOOST_CHECK_EQUAL(all->sequence, highest);
}

BOOST_AUTO_TEST_CASE(kvpub_republishes_uuid_and_properties_with_next_sequence) {
  Server s;
  auto p = s.peer();
  p->set("k", "v1");
  auto first = p->wait_kvpub("k", 5s);
  BOOST_REQUIRE(first);
  std::string uuid = p->set("k", "v2", "colour=red\nshape=round\n");
  auto second = p->wait_kvpub("k", 5s);
  BOOST_REQUIRE(second);
  BOOST_CHECK_EQUAL(second->sequence, first->sequence + 1);
  BOOST_CHECK(second->uuid == uuid);
  BOOST_CHECK_EQUAL(second->properties, "colour=red\nshape=round\n");
  BOOST_CHECK_EQUAL(second->body, "v2");
  auto snap = p->snapshot("k");
  BOOST_REQUIRE(snap);
  BOOST_CHECK(snap->entries.at("k").uuid == uuid);
  BOOST_CHECK_EQUAL(snap->entries.at("k").properties, "colour=red\nshape=round\n");
}

BOOST_AUTO_TEST_CASE(empty_value_deletes_key_and_is_published) {
  Server s;
  auto p = s.peer();
  p->set("gone", "soon");
  BOOST_REQUIRE(p->wait_kvpub("gone", 5s));
  p->set("gone", "");
  auto del = p->wait_kvpub("gone", 5s);
  BOOST_REQUIRE(del);
  BOOST_CHECK(del->body.empty());
  auto snap = p->snapshot();
  BOOST_REQUIRE(snap);
  BOOST_CHECK_EQUAL(snap->entries.count("gone"), 0u);
}

BOOST_AUTO_TEST_CASE(ttl_expires_key_and_publishes_delete) {
  Server s;
  auto p = s.peer();
  p->set("eph", "x", "ttl=1\n");
  p->set("keep", "y", "ttl=1\n");
  p->set("keep", "y2");  // rewrite without ttl clears the expiry
  auto set = p->wait_kvpub("eph", 5s);
  BOOST_REQUIRE(set);
  auto gone = p->wait_kvpub("eph", 5s);
  BOOST_REQUIRE_MESSAGE(gone, "no expiry KVPUB within 5 s");
  BOOST_CHECK(gone->body.empty());
  BOOST_CHECK_GT(gone->sequence, set->sequence);
  auto snap = p->snapshot();
  BOOST_REQUIRE(snap);
  BOOST_CHECK_EQUAL(snap->entries.count("eph"), 0u);
  BOOST_CHECK_EQUAL(snap->entries.at("keep").body, "y2");
}

BOOST_AUTO_TEST_CASE(ttl_set_before_restart_expires_after_restart) {
  Server s;
  std::uint64_t seq_before = 0;
  {
    auto p = s.peer();
    p->set("lease", "held", "ttl=2\n");
    auto kv = p->wait_kvpub("lease", 5s);
    BOOST_REQUIRE(kv);
    seq_before = kv->sequence;
  }
  s.zstored.kill(SIGKILL);
  s.zstored.wait_exit();
  auto down_until = std::chrono::steady_clock::now() + 2500ms;
  // Stay down past the expiry time (a wall-clock deadline, not a wait for a condition).
  std::this_thread::sleep_until(down_until);
  BOOST_REQUIRE(s.zstored.restart());
  auto p = s.peer();
  auto snap = p->snapshot();
  BOOST_REQUIRE(snap);
  BOOST_CHECK_EQUAL(snap->entries.count("lease"), 0u);
  BOOST_CHECK_GT(snap->sequence, seq_before);  // the expiry was published with a new sequence
}

BOOST_AUTO_TEST_CASE(hugz_sent_when_idle) {
  Server s({"--hugz-interval-ms", "200"});
  auto p = s.peer();
  bool saw_hugz = false;
  auto deadline = std::chrono::steady_clock::now() + 3s;
  while (!saw_hugz && std::chrono::steady_clock::now() < deadline) {
    auto u = p->next_update(1s);
    if (u && std::holds_alternative<chp::Hugz>(*u)) saw_hugz = true;
  }
  BOOST_CHECK(saw_hugz);
}

BOOST_AUTO_TEST_CASE(sequence_continues_after_sigkill_and_restart) {
  Server s;
  std::uint64_t last = 0;
  {
    auto p = s.peer();
    for (int i = 0; i < 5; ++i) p->set("k" + std::to_string(i), "v");
    auto kv = p->wait_kvpub("k4", 5s);
    BOOST_REQUIRE(kv);
    last = kv->sequence;
  }
  s.zstored.kill(SIGKILL);
  s.zstored.wait_exit();
  BOOST_REQUIRE(s.zstored.restart());
  auto p = s.peer();  // its probe consumes a sequence
  p->set("after", "restart");
  auto kv = p->wait_kvpub("after", 5s);
  BOOST_REQUIRE(kv);
  BOOST_CHECK_GT(kv->sequence, last);
}

BOOST_AUTO_TEST_CASE(sigkill_mid_stream_loses_nothing_published) {
  Server s;
  std::map<std::string, std::pair<std::uint64_t, std::string>> seen;  // key -> (seq, value)
  std::uint64_t max_seq = 0;
  for (int round = 0; round < 3; ++round) {
    auto p = s.peer();
    std::size_t seen_this_round = 0;
    auto record = [&](std::chrono::milliseconds wait) {
      auto u = p->next_update(wait);
      if (!u) return false;
      if (auto* kv = std::get_if<chp::KvMsg>(&*u)) {
        BOOST_CHECK_GT(kv->sequence, max_seq);  // sequences never go back, across restarts too
        max_seq = std::max(max_seq, kv->sequence);
        if (kv->key.rfind("key", 0) == 0) {
          seen[kv->key] = {kv->sequence, kv->body};
          ++seen_this_round;
        }
      }
      return true;
    };
    for (int i = 0; i < 3000; ++i) {
      p->set("key" + std::to_string(i % 500), "r" + std::to_string(round) + "-" + std::to_string(i));
      if (i == 1500) {  // kill mid-stream, once part of it was published
        auto deadline = std::chrono::steady_clock::now() + 5s;
        while (seen_this_round == 0 && std::chrono::steady_clock::now() < deadline) record(100ms);
        s.zstored.kill(SIGKILL);
      }
    }
    // Collect everything that was published before the kill took effect.
    while (record(500ms)) {
    }
    BOOST_CHECK_GT(seen_this_round, 0u);
    s.zstored.wait_exit();
    BOOST_REQUIRE(s.zstored.restart());
    auto check = s.peer();
    auto snap = check->snapshot("key");
    BOOST_REQUIRE(snap);
    BOOST_CHECK_GE(snap->sequence, max_seq);
    for (const auto& [key, sv] : seen) {
      auto it = snap->entries.find(key);
      BOOST_REQUIRE_MESSAGE(it != snap->entries.end(), "published key lost: " + key);
      BOOST_CHECK_GE(it->second.sequence, sv.first);
      if (it->second.sequence == sv.first) BOOST_CHECK_EQUAL(it->second.body, sv.second);
    }
    // The next round's probe and sets continue above the snapshot.
    max_seq = std::max(max_seq, snap->sequence);
  }
  BOOST_CHECK(!seen.empty());
}

BOOST_AUTO_TEST_CASE(binary_one_mebibyte_value_round_trips) {
  Server s;
  auto p = s.peer();
  std::string key("bin\0key", 7);
  std::string value(1 << 20, '\0');
  for (std::size_t i = 0; i < value.size(); ++i) value[i] = static_cast<char>(i * 131 % 256);
  p->set(key, value);
  auto kv = p->wait_kvpub(key, 5s);
  BOOST_REQUIRE(kv);
  BOOST_CHECK(kv->body == value);
  auto snap = p->snapshot(std::string("bin\0", 4));
  BOOST_REQUIRE(snap);
  BOOST_REQUIRE_EQUAL(snap->entries.count(key), 1u);
  BOOST_CHECK(snap->entries.at(key).body == value);
}

BOOST_AUTO_TEST_CASE(malformed_input_is_dropped_and_server_keeps_serving) {
  Server s({"--max-value-bytes", "1000"});
  auto p = s.peer();
  std::string seq8 = chp::encode_sequence(0);
  std::string uuid(16, 'u');
  p->send_snapshot_port({"ICANHAZ?"});                               // 1-frame ICANHAZ?
  p->send_snapshot_port({"GIMME", ""});                              // unknown command
  p->send_collector({"k", seq8, uuid});                              // 3 frames
  p->send_collector({"k", "1234567", uuid, "", "v"});                // 7-byte sequence
  p->send_collector({"k", seq8, std::string(15, 'u'), "", "v"});     // 15-byte uuid
  p->send_collector({"", seq8, uuid, "", "v"});                      // empty key
  p->send_collector({"k", seq8, uuid, "ttl=soon\n", "v"});           // bad ttl
  p->send_collector({"k", seq8, uuid, "novalue\n", "v"});            // bad properties
  p->send_collector({"HUGZ", seq8, uuid, "", "v"});                  // reserved key
  p->send_collector({"k", seq8, uuid, "", std::string(5000, 'x')});  // oversized
  p->send_collector({"k", seq8, uuid, "", "v", "extra"});            // 6 frames

  p->set("good", "still works");
  auto kv = p->wait_kvpub("good", 5s);
  BOOST_REQUIRE(kv);
  auto snap = p->snapshot();
  BOOST_REQUIRE(snap);
  BOOST_CHECK_EQUAL(snap->entries.count("k"), 0u);
  BOOST_CHECK_EQUAL(snap->entries.count("HUGZ"), 0u);
  BOOST_CHECK(s.zstored.process()->running());
  BOOST_CHECK(
      zstore::testing::wait_until([&] { return s.zstored.log().find("dropped malformed") != std::string::npos; }));
}

BOOST_AUTO_TEST_CASE(sigterm_shuts_down_cleanly_with_exit_zero) {
  Server s;
  auto p = s.peer();
  p->set("x", "y");
  BOOST_REQUIRE(p->wait_kvpub("x", 5s));
  s.zstored.kill(SIGTERM);
  BOOST_CHECK_EQUAL(s.zstored.wait_exit(5s), 0);
  BOOST_CHECK(s.zstored.log().find("stopped cleanly") != std::string::npos);
}

namespace {

// A DEALER that asks s for its whole map and is then never read (receive
// queue rcvhwm messages; rcvbuf bytes of TCP buffer when given).
zmq::socket_t ask_and_never_read(Server& s, int rcvhwm, int rcvbuf = 0) {
  zmq::socket_t dealer(s.ctx, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::rcvhwm, rcvhwm);
  if (rcvbuf > 0) dealer.set(zmq::sockopt::rcvbuf, rcvbuf);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.connect(s.zstored.chp_endpoint());
  auto req = chp::encode_icanhaz({"", std::nullopt});
  dealer.send(zmq::buffer(req[0]), zmq::send_flags::sndmore);
  dealer.send(zmq::buffer(req[1]), zmq::send_flags::none);
  return dealer;
}

}  // namespace

BOOST_AUTO_TEST_CASE(stalled_snapshot_reader_does_not_block_other_clients) {
  Server s;
  auto writer = s.peer();
  constexpr int kKeys = 30000;
  std::string value(100, 'v');
  for (int i = 0; i < kKeys; ++i) writer->set("bulk/" + std::to_string(i), value);
  BOOST_REQUIRE(writer->wait_kvpub("bulk/" + std::to_string(kKeys - 1), 20s));

  // A client asks for the whole map and never reads its socket.
  zmq::socket_t stalled = ask_and_never_read(s, 10);

  // Everyone else is still served: updates flow and snapshots complete.
  for (int round = 0; round < 3; ++round) {
    writer->set("live", std::to_string(round));
    auto kv = writer->wait_kvpub("live", 2s);
    BOOST_REQUIRE_MESSAGE(kv, "update not published while a snapshot reader is stalled");
    auto other = s.peer();
    auto snap = other->snapshot("", 20s);
    BOOST_REQUIRE(snap);
    BOOST_CHECK_GE(snap->entries.size(), static_cast<std::size_t>(kKeys));
  }
}

// --snapshot-stall-ms: a snapshot whose client reads nothing is dropped
// (its cursor and RocksDB snapshot released) once it has made no progress
// for that long; the server logs it and serves others as before. 14,000
// KVSYNCs cannot all sit in the ROUTER's queue (10,000 messages) and the
// sockets' buffers, so the session really blocks.
BOOST_AUTO_TEST_CASE(a_snapshot_reader_stalled_past_the_stall_time_is_dropped) {
  Server s({"--snapshot-stall-ms", "500"});
  auto writer = s.peer();
  constexpr int kKeys = 14000;
  std::string value(2 * 1024, 'v');
  for (int i = 0; i < kKeys; ++i) writer->set("big/" + std::to_string(i), value);
  BOOST_REQUIRE(writer->wait_kvpub("big/" + std::to_string(kKeys - 1), 30s));

  zmq::socket_t stalled = ask_and_never_read(s, 1, 4096);

  BOOST_TEST(zstore::testing::wait_until(
                 [&] {
                   return s.zstored.log().find("dropped 1 snapshot(s) whose client read nothing for 500 ms") !=
                          std::string::npos;
                 },
                 20s),
             s.zstored.log());
  auto snap = s.peer()->snapshot("big/1", 20s);
  BOOST_REQUIRE(snap);
  BOOST_TEST(snap->entries.count("big/1") == 1u);
}
