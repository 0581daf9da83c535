#include "protocol/beacon.h"

#include <boost/test/unit_test.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace beacon = zstore::protocol::beacon;
using zstore::protocol::DecodeErrorKind;
using zstore::protocol::Frames;

namespace {

const std::string kUuid = "0123456789ABCDEF0123456789ABCDEF";
const std::string kKey = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";  // a Z85 public key (rfc 32's example)

// The error detail of a failed result, "" for a success (Boost builds check
// messages even when the check passes).
template <typename R>
std::string failure(const R& result) {
  return result.ok() ? std::string() : result.error().detail;
}

std::vector<std::string_view> views(const Frames& frames) { return {frames.begin(), frames.end()}; }

template <typename Decode>
void expect_error(Decode decode, const Frames& frames, DecodeErrorKind kind, std::string_view detail_part = {}) {
  auto v = views(frames);
  auto result = decode(v);
  BOOST_REQUIRE_MESSAGE(!result.ok(), "decode unexpectedly succeeded");
  BOOST_CHECK_MESSAGE(result.error().kind == kind, "kind is " << to_string(result.error().kind) << ", expected "
                                                              << to_string(kind)
                                                              << " (detail: " << result.error().detail << ")");
  BOOST_CHECK_MESSAGE(result.error().detail.find(detail_part) != std::string::npos,
                      "detail '" << result.error().detail << "' does not mention '" << detail_part << "'");
}

void expect_node_error(const Frames& frames, DecodeErrorKind kind, std::string_view detail_part = {}) {
  expect_error(beacon::decode_node_beacon, frames, kind, detail_part);
}

void expect_tower_error(const Frames& frames, DecodeErrorKind kind, std::string_view detail_part = {}) {
  expect_error(beacon::decode_tower_beacon, frames, kind, detail_part);
}

zstore::protocol::DecodeResult<beacon::NodeBeacon> decode_node(const Frames& frames) {
  auto v = views(frames);
  return beacon::decode_node_beacon(v);
}

zstore::protocol::DecodeResult<beacon::TowerBeacon> decode_tower(const Frames& frames) {
  auto v = views(frames);
  return beacon::decode_tower_beacon(v);
}

}  // namespace

// ---------------------------------------------------------------------------
// Node beacon

BOOST_AUTO_TEST_CASE(node_beacon_is_four_frames_with_decimal_port) {
  BOOST_CHECK(beacon::encode(beacon::NodeBeacon{kUuid, "10.0.0.7", 5556}) == (Frames{"B", kUuid, "10.0.0.7", "5556"}));
  BOOST_CHECK(beacon::encode(beacon::NodeBeacon{kUuid, "", 65535}) == (Frames{"B", kUuid, "", "65535"}));
}

BOOST_AUTO_TEST_CASE(node_beacon_round_trips) {
  for (const auto& b : {beacon::NodeBeacon{kUuid, "10.0.0.7", 5556}, beacon::NodeBeacon{kUuid, "", 1},
                        beacon::NodeBeacon{"x", std::string(255, 'h'), 65535},
                        beacon::NodeBeacon{std::string(255, 'u'), "store-1.example", 40000}}) {
    auto decoded = decode_node(beacon::encode(b));
    BOOST_REQUIRE_MESSAGE(decoded.ok(), failure(decoded));
    BOOST_CHECK(*decoded == b);
  }
}

BOOST_AUTO_TEST_CASE(node_beacon_accepts_older_three_frame_form) {
  auto decoded = decode_node(Frames{"B", kUuid, "5556"});
  BOOST_REQUIRE_MESSAGE(decoded.ok(), failure(decoded));
  BOOST_CHECK(*decoded == (beacon::NodeBeacon{kUuid, "", 5556}));
}

BOOST_AUTO_TEST_CASE(node_beacon_with_wrong_frame_count_is_rejected) {
  expect_node_error(Frames{}, DecodeErrorKind::kFrameCount, "no frames");
  expect_node_error(Frames{"B"}, DecodeErrorKind::kFrameCount, "got 1");
  expect_node_error(Frames{"B", kUuid}, DecodeErrorKind::kFrameCount, "got 2");
  expect_node_error(Frames{"B", kUuid, "h", "5556", kKey, ""}, DecodeErrorKind::kFrameCount, "got 6");
}

BOOST_AUTO_TEST_CASE(node_beacon_not_starting_with_b_is_rejected) {
  expect_node_error(Frames{"W", kUuid, "h", "5556"}, DecodeErrorKind::kUnknownId, "not 'B'");
  expect_node_error(Frames{"", kUuid, "h", "5556"}, DecodeErrorKind::kUnknownId);
  expect_node_error(Frames{"BB", kUuid, "h", "5556"}, DecodeErrorKind::kUnknownId);
  expect_node_error(Frames{std::string(1000, 'X'), kUuid, "h", "5556"}, DecodeErrorKind::kUnknownId, "...");
}

BOOST_AUTO_TEST_CASE(node_beacon_with_empty_uuid_is_rejected) {
  expect_node_error(Frames{"B", "", "h", "5556"}, DecodeErrorKind::kBadField, "uuid is empty");
  expect_node_error(Frames{"B", "", "5556"}, DecodeErrorKind::kBadField, "uuid is empty");
}

BOOST_AUTO_TEST_CASE(node_beacon_with_bad_port_is_rejected) {
  for (const char* port : {"", "0", "00", "65536", "99999", "4294967297", "99999999999999999999999", "-1", "+80", " 80",
                           "80 ", "8o", "0x50", "80.0"}) {
    BOOST_TEST_CONTEXT("port '" << port << "'") {
      expect_node_error(Frames{"B", kUuid, "h", port}, DecodeErrorKind::kBadField, "port");
      expect_node_error(Frames{"B", kUuid, port}, DecodeErrorKind::kBadField, "port");
    }
  }
  expect_node_error(Frames{"B", kUuid, std::string("80\0", 3)}, DecodeErrorKind::kBadField, "port");
}

BOOST_AUTO_TEST_CASE(node_beacon_accepts_ports_1_to_65535) {
  for (const char* port : {"1", "5556", "65535", "080"}) {
    BOOST_TEST_CONTEXT("port '" << port << "'") { BOOST_CHECK(decode_node(Frames{"B", kUuid, "h", port}).ok()); }
  }
}

BOOST_AUTO_TEST_CASE(node_beacon_with_over_long_field_is_rejected) {
  expect_node_error(Frames{"B", std::string(256, 'u'), "h", "5556"}, DecodeErrorKind::kTooLarge, "uuid");
  expect_node_error(Frames{"B", kUuid, std::string(256, 'h'), "5556"}, DecodeErrorKind::kTooLarge, "host");
  expect_node_error(Frames{"B", kUuid, "h", std::string(256, '1')}, DecodeErrorKind::kTooLarge, "port");
}

BOOST_AUTO_TEST_CASE(encoding_an_invalid_node_beacon_throws) {
  BOOST_CHECK_THROW(beacon::encode(beacon::NodeBeacon{kUuid, "h", 0}), std::invalid_argument);
  BOOST_CHECK_THROW(beacon::encode(beacon::NodeBeacon{"", "h", 1}), std::invalid_argument);
  BOOST_CHECK_THROW(beacon::encode(beacon::NodeBeacon{std::string(256, 'u'), "h", 1}), std::invalid_argument);
  BOOST_CHECK_THROW(beacon::encode(beacon::NodeBeacon{kUuid, std::string(256, 'h'), 1}), std::invalid_argument);
}

// ---------------------------------------------------------------------------
// The CURVE key extension

BOOST_AUTO_TEST_CASE(a_key_is_one_more_frame_and_plain_beacons_are_unchanged) {
  BOOST_CHECK(beacon::encode(beacon::NodeBeacon{kUuid, "h", 5556, kKey}) == (Frames{"B", kUuid, "h", "5556", kKey}));
  BOOST_CHECK(beacon::encode(beacon::TowerBeacon{kUuid, "tcp://h:1", kKey}) == (Frames{"B", kUuid, "tcp://h:1", kKey}));
  BOOST_CHECK(beacon::encode(beacon::NodeBeacon{kUuid, "h", 5556}).size() == 4u);
  BOOST_CHECK(beacon::encode(beacon::TowerBeacon{kUuid, "tcp://h:1"}).size() == 3u);
}

BOOST_AUTO_TEST_CASE(beacons_with_a_key_round_trip) {
  for (const auto& b : {beacon::NodeBeacon{kUuid, "h", 5556, kKey}, beacon::NodeBeacon{kUuid, "", 1, kKey}}) {
    auto decoded = decode_node(beacon::encode(b));
    BOOST_REQUIRE_MESSAGE(decoded.ok(), failure(decoded));
    BOOST_CHECK(*decoded == b);
  }
  auto tower = decode_tower(beacon::encode(beacon::TowerBeacon{kUuid, "tcp://h:1", kKey}));
  BOOST_REQUIRE_MESSAGE(tower.ok(), failure(tower));
  BOOST_CHECK(tower->key == kKey);
}

BOOST_AUTO_TEST_CASE(a_key_that_is_not_z85_is_rejected) {
  for (const std::string& key : {std::string(), std::string(39, 'a'), std::string(41, 'a'), std::string(40, ' '),
                                 std::string(39, 'a') + '"', std::string(39, 'a') + '\0'}) {
    BOOST_TEST_CONTEXT("key '" << key << "'") {
      BOOST_CHECK(!beacon::is_z85_key(key));
      expect_node_error(Frames{"B", kUuid, "h", "5556", key}, DecodeErrorKind::kBadField, "key");
      expect_tower_error(Frames{"B", kUuid, "tcp://h:1", key}, DecodeErrorKind::kBadField, "key");
    }
  }
  BOOST_CHECK(beacon::is_z85_key(kKey));
  BOOST_CHECK_THROW(beacon::encode(beacon::NodeBeacon{kUuid, "h", 1, "short"}), std::invalid_argument);
  BOOST_CHECK_THROW(beacon::encode(beacon::TowerBeacon{kUuid, "tcp://h:1", "short"}), std::invalid_argument);
}

// ---------------------------------------------------------------------------
// Tower beacon

BOOST_AUTO_TEST_CASE(tower_beacon_is_three_frames_with_tcp_endpoint) {
  BOOST_CHECK(beacon::encode(beacon::TowerBeacon{kUuid, "tcp://10.0.0.7:5556"}) ==
              (Frames{"B", kUuid, "tcp://10.0.0.7:5556"}));
}

BOOST_AUTO_TEST_CASE(tower_beacon_round_trips) {
  for (const auto& b : {beacon::TowerBeacon{kUuid, "tcp://10.0.0.7:5556"}, beacon::TowerBeacon{"u", "tcp://h:1"},
                        beacon::TowerBeacon{kUuid, "tcp://[::1]:65535"},
                        beacon::TowerBeacon{kUuid, beacon::tower_endpoint(std::string(240, 'h'), 40000)}}) {
    auto decoded = decode_tower(beacon::encode(b));
    BOOST_REQUIRE_MESSAGE(decoded.ok(), failure(decoded));
    BOOST_CHECK(*decoded == b);
  }
}

BOOST_AUTO_TEST_CASE(tower_beacon_with_wrong_frame_count_is_rejected) {
  expect_tower_error(Frames{}, DecodeErrorKind::kFrameCount, "no frames");
  expect_tower_error(Frames{"B"}, DecodeErrorKind::kFrameCount, "got 1");
  expect_tower_error(Frames{"B", kUuid}, DecodeErrorKind::kFrameCount, "got 2");
  expect_tower_error(Frames{"B", kUuid, "tcp://h:1", kKey, ""}, DecodeErrorKind::kFrameCount, "got 5");
}

BOOST_AUTO_TEST_CASE(tower_beacon_not_starting_with_b_is_rejected) {
  expect_tower_error(Frames{"W", kUuid, "tcp://h:1"}, DecodeErrorKind::kUnknownId, "not 'B'");
  expect_tower_error(Frames{"b", kUuid, "tcp://h:1"}, DecodeErrorKind::kUnknownId);
}

BOOST_AUTO_TEST_CASE(tower_beacon_with_empty_uuid_is_rejected) {
  expect_tower_error(Frames{"B", "", "tcp://h:1"}, DecodeErrorKind::kBadField, "uuid is empty");
}

BOOST_AUTO_TEST_CASE(tower_beacon_with_bad_endpoint_is_rejected) {
  for (const char* endpoint : {"", "h:5556", "udp://h:5556", "ipc:///tmp/x", "tcp://h", "tcp://:5556", "tcp://h:",
                               "tcp://h:0", "tcp://h:65536", "tcp://h:-1", "tcp://h:55 56", "TCP://h:5556"}) {
    BOOST_TEST_CONTEXT("endpoint '" << endpoint << "'") {
      expect_tower_error(Frames{"B", kUuid, endpoint}, DecodeErrorKind::kBadField, "endpoint");
    }
  }
}

BOOST_AUTO_TEST_CASE(tower_beacon_with_over_long_field_is_rejected) {
  expect_tower_error(Frames{"B", std::string(256, 'u'), "tcp://h:1"}, DecodeErrorKind::kTooLarge, "uuid");
  expect_tower_error(Frames{"B", kUuid, "tcp://" + std::string(250, 'h') + ":1"}, DecodeErrorKind::kTooLarge,
                     "endpoint");
}

BOOST_AUTO_TEST_CASE(encoding_an_invalid_tower_beacon_throws) {
  BOOST_CHECK_THROW(beacon::encode(beacon::TowerBeacon{"", "tcp://h:1"}), std::invalid_argument);
  BOOST_CHECK_THROW(beacon::encode(beacon::TowerBeacon{kUuid, "h:1"}), std::invalid_argument);
  BOOST_CHECK_THROW(beacon::encode(beacon::TowerBeacon{kUuid, "tcp://h:0"}), std::invalid_argument);
  BOOST_CHECK_THROW(beacon::encode(beacon::TowerBeacon{kUuid, beacon::tower_endpoint("", 5556)}),
                    std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(tower_endpoint_is_tcp_host_port) {
  BOOST_CHECK_EQUAL(beacon::tower_endpoint("10.0.0.7", 5557), "tcp://10.0.0.7:5557");
  BOOST_CHECK_EQUAL(beacon::tower_endpoint("store-1", 1), "tcp://store-1:1");
  BOOST_CHECK_EQUAL(beacon::tower_endpoint("::1", 5557), "tcp://[::1]:5557");
  BOOST_CHECK_EQUAL(beacon::tower_endpoint("[fe80::1]", 5557), "tcp://[fe80::1]:5557");
}

// ---------------------------------------------------------------------------
// Welcome

BOOST_AUTO_TEST_CASE(welcome_is_one_frame_w) {
  BOOST_CHECK(beacon::encode_welcome() == Frames{"W"});
  const Frames welcome = beacon::encode_welcome();
  auto v = views(welcome);
  BOOST_CHECK(beacon::is_welcome(v));
}

BOOST_AUTO_TEST_CASE(other_messages_are_not_welcome) {
  for (const Frames& frames : {Frames{}, Frames{""}, Frames{"B"}, Frames{"WW"}, Frames{"W", ""}, Frames{"w"},
                               Frames{"B", kUuid, "tcp://h:1"}}) {
    auto v = views(frames);
    BOOST_CHECK(!beacon::is_welcome(v));
  }
}

BOOST_AUTO_TEST_CASE(random_beacon_frames_never_crash) {
  std::mt19937 rng(5556);
  const std::vector<std::string> pieces = {
      "B", "W", "", kUuid, "h", "tcp://h:1", "5556", "0", "65536", std::string(300, 'x'), std::string("\0\xff", 2)};
  for (int round = 0; round < 5000; ++round) {
    Frames frames(rng() % 6);
    for (auto& f : frames) f = pieces[rng() % pieces.size()];
    auto v = views(frames);
    auto node = beacon::decode_node_beacon(v);
    auto tower = beacon::decode_tower_beacon(v);
    if (!node.ok()) BOOST_CHECK(!node.error().detail.empty());
    if (!tower.ok()) BOOST_CHECK(!tower.error().detail.empty());
    (void)beacon::is_welcome(v);
  }
}
