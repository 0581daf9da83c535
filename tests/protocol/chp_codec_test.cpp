#include "protocol/chp_codec.h"

#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace chp = zstore::protocol::chp;
using zstore::protocol::DecodeErrorKind;
using zstore::protocol::DecodeResult;
using zstore::protocol::Frames;

namespace {

const std::string kBinary = std::string("a\0b\0\xff\x01\n=", 8);
const std::string kUuid = std::string("\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd\xee\x00", 16);

std::vector<std::string_view> views(const Frames& frames) { return {frames.begin(), frames.end()}; }

// The error detail of a failed result, "" for a success.
template <typename T>
std::string failure(const DecodeResult<T>& result) {
  return result.ok() ? std::string() : result.error().detail;
}

// Every decoder, applied to the same frames, for the "never throws" sweep.
enum class Decoder { kIcanhaz, kKvset, kSnapshotReply, kUpdate };
const Decoder kDecoders[] = {Decoder::kIcanhaz, Decoder::kKvset, Decoder::kSnapshotReply, Decoder::kUpdate};

const char* name(Decoder d) {
  switch (d) {
    case Decoder::kIcanhaz:
      return "decode_icanhaz";
    case Decoder::kKvset:
      return "decode_kvset";
    case Decoder::kSnapshotReply:
      return "decode_snapshot_reply";
    case Decoder::kUpdate:
      return "decode_update";
  }
  return "?";
}

// Runs one decoder; returns whether it succeeded and, if not, the error.
struct Outcome {
  bool ok = false;
  DecodeErrorKind kind = DecodeErrorKind::kFrameCount;
  std::string detail;
};

template <typename T>
Outcome outcome_of(const DecodeResult<T>& r) {
  if (r.ok()) return {true, DecodeErrorKind::kFrameCount, ""};
  return {false, r.error().kind, r.error().detail};
}

Outcome run(Decoder d, const Frames& frames, const chp::Limits& limits = {}) {
  auto v = views(frames);
  switch (d) {
    case Decoder::kIcanhaz:
      return outcome_of(chp::decode_icanhaz(v, limits));
    case Decoder::kKvset:
      return outcome_of(chp::decode_kvset(v, limits));
    case Decoder::kSnapshotReply:
      return outcome_of(chp::decode_snapshot_reply(v, limits));
    case Decoder::kUpdate:
      return outcome_of(chp::decode_update(v, limits));
  }
  return {};
}

// Decoding fails with `kind` (and never throws).
void expect_error(Decoder d, const Frames& frames, DecodeErrorKind kind, const chp::Limits& limits = {}) {
  Outcome out;
  BOOST_CHECK_NO_THROW(out = run(d, frames, limits));
  BOOST_CHECK_MESSAGE(!out.ok, name(d) << " unexpectedly accepted the input");
  if (!out.ok) {
    BOOST_CHECK_MESSAGE(out.kind == kind, name(d) << ": kind is " << to_string(out.kind) << ", expected "
                                                  << to_string(kind) << " (" << out.detail << ")");
    BOOST_CHECK_MESSAGE(!out.detail.empty(), name(d) << ": error without detail");
  }
}

// Each KV decoder (KVSET, KVSYNC, KVPUB) fails on frames with `kind`.
void expect_kv_error(const Frames& frames, DecodeErrorKind kind, const chp::Limits& limits = {}) {
  for (Decoder d : {Decoder::kKvset, Decoder::kSnapshotReply, Decoder::kUpdate}) {
    BOOST_TEST_CONTEXT(name(d)) { expect_error(d, frames, kind, limits); }
  }
}

Frames kv_frames(const chp::KvMsg& msg) { return chp::encode_kvmsg(msg); }

chp::KvMsg sample_kv() { return {"/a/key", 42, kUuid, "ttl=5\nowner=me\n", "value"}; }

// Round trip of a KVSET/KVSYNC/KVPUB through every KV decoder.
void expect_kv_round_trip(const chp::KvMsg& msg) {
  const Frames frames = chp::encode_kvmsg(msg);
  BOOST_REQUIRE_EQUAL(frames.size(), chp::kKvFrames);
  auto v = views(frames);

  auto set = chp::decode_kvset(v);
  BOOST_REQUIRE_MESSAGE(set.ok(), "KVSET: " << failure(set));
  BOOST_CHECK(*set == msg);

  auto sync = chp::decode_snapshot_reply(v);
  BOOST_REQUIRE_MESSAGE(sync.ok(), "KVSYNC: " << failure(sync));
  BOOST_REQUIRE(std::holds_alternative<chp::KvMsg>(*sync));
  BOOST_CHECK(std::get<chp::KvMsg>(*sync) == msg);

  auto pub = chp::decode_update(v);
  BOOST_REQUIRE_MESSAGE(pub.ok(), "KVPUB: " << failure(pub));
  BOOST_REQUIRE(std::holds_alternative<chp::KvMsg>(*pub));
  BOOST_CHECK(std::get<chp::KvMsg>(*pub) == msg);
}

}  // namespace

// ---------------------------------------------------------------------------
// Round trips

BOOST_AUTO_TEST_CASE(icanhaz_round_trips_with_and_without_subtree) {
  for (const std::string subtree : {"", "/a/", "/deep/sub/tree/"}) {
    Frames frames = chp::encode_icanhaz({subtree, std::nullopt});
    BOOST_REQUIRE_EQUAL(frames.size(), 2u);
    BOOST_CHECK_EQUAL(frames[0], "ICANHAZ?");
    BOOST_CHECK_EQUAL(frames[1], subtree);
    auto v = views(frames);
    auto decoded = chp::decode_icanhaz(v);
    BOOST_REQUIRE_MESSAGE(decoded.ok(), failure(decoded));
    BOOST_CHECK(*decoded == (chp::Icanhaz{subtree, std::nullopt}));
  }
}

BOOST_AUTO_TEST_CASE(kvsync_round_trips_with_its_stored_fields) {
  expect_kv_round_trip(sample_kv());
  expect_kv_round_trip({"k", 0, "", "", "v"});  // sequence "has no significance and may be zero"
}

BOOST_AUTO_TEST_CASE(kvpub_round_trips_with_maximum_sequence) {
  expect_kv_round_trip({"k", std::numeric_limits<std::uint64_t>::max(), kUuid, "", "v"});
}

BOOST_AUTO_TEST_CASE(kvset_round_trips_with_uuid_and_properties) {
  const chp::KvMsg msg{"/a/b", 0, kUuid, "ttl=30\n", "hello"};
  const Frames frames = chp::encode_kvmsg(msg);
  BOOST_CHECK_EQUAL(frames[1], std::string(8, '\0'));
  BOOST_CHECK_EQUAL(frames[2].size(), chp::kUuidSize);
  BOOST_CHECK_EQUAL(frames[3], "ttl=30\n");
  expect_kv_round_trip(msg);
}

BOOST_AUTO_TEST_CASE(kvset_with_empty_value_is_a_delete_and_round_trips) {
  expect_kv_round_trip({"gone", 0, kUuid, "", ""});
}

BOOST_AUTO_TEST_CASE(kthxbai_carries_the_subtree_in_frame_4) {
  const chp::Kthxbai msg{0x0102030405060708ull, "/a/", {}};
  const Frames frames = chp::encode_kthxbai(msg);
  BOOST_REQUIRE_EQUAL(frames.size(), 5u);
  BOOST_CHECK_EQUAL(frames[0], "KTHXBAI");
  BOOST_CHECK_EQUAL(frames[1], std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));
  BOOST_CHECK(frames[2].empty());
  BOOST_CHECK(frames[3].empty());
  BOOST_CHECK_EQUAL(frames[4], "/a/");
  auto v = views(frames);
  auto decoded = chp::decode_snapshot_reply(v);
  BOOST_REQUIRE_MESSAGE(decoded.ok(), failure(decoded));
  BOOST_REQUIRE(std::holds_alternative<chp::Kthxbai>(*decoded));
  BOOST_CHECK(std::get<chp::Kthxbai>(*decoded) == msg);
}

// zstore's extensions ride in KTHXBAI's properties frame (frame 4 of 5),
// which reference clients read and ignore.
BOOST_AUTO_TEST_CASE(kthxbai_properties_round_trip_in_frame_3_and_are_bounded) {
  const chp::Kthxbai msg{42, "/s/", "epochs=0:42\n"};
  const Frames frames = chp::encode_kthxbai(msg);
  BOOST_CHECK_EQUAL(frames[3], "epochs=0:42\n");
  auto v = views(frames);
  auto decoded = chp::decode_snapshot_reply(v);
  BOOST_REQUIRE_MESSAGE(decoded.ok(), failure(decoded));
  BOOST_CHECK(std::get<chp::Kthxbai>(*decoded) == msg);
  chp::Limits small;
  small.max_properties_bytes = 4;
  BOOST_CHECK(!chp::decode_snapshot_reply(v, small).ok());
}

BOOST_AUTO_TEST_CASE(kthxbai_with_empty_subtree_as_the_reference_server_sends_it) {
  auto frames = chp::encode_kthxbai({7, "", {}});
  auto v = views(frames);
  auto decoded = chp::decode_snapshot_reply(v);
  BOOST_REQUIRE_MESSAGE(decoded.ok(), failure(decoded));
  BOOST_CHECK(std::get<chp::Kthxbai>(*decoded) == (chp::Kthxbai{7, "", {}}));
}

BOOST_AUTO_TEST_CASE(hugz_round_trips) {
  for (std::uint64_t seq : {std::uint64_t{0}, std::uint64_t{99}}) {
    const Frames frames = chp::encode_hugz({seq});
    BOOST_REQUIRE_EQUAL(frames.size(), 5u);
    BOOST_CHECK_EQUAL(frames[0], "HUGZ");
    BOOST_CHECK(frames[2].empty() && frames[3].empty() && frames[4].empty());
    auto v = views(frames);
    auto decoded = chp::decode_update(v);
    BOOST_REQUIRE_MESSAGE(decoded.ok(), failure(decoded));
    BOOST_REQUIRE(std::holds_alternative<chp::Hugz>(*decoded));
    BOOST_CHECK_EQUAL(std::get<chp::Hugz>(*decoded).sequence, seq);
  }
}

BOOST_AUTO_TEST_CASE(sequence_is_eight_bytes_big_endian) {
  BOOST_CHECK_EQUAL(chp::encode_sequence(0), std::string(8, '\0'));
  BOOST_CHECK_EQUAL(chp::encode_sequence(1), std::string("\0\0\0\0\0\0\0\x01", 8));
  BOOST_CHECK_EQUAL(chp::encode_sequence(0xff00000000000000ull), std::string("\xff\0\0\0\0\0\0\0", 8));
}

BOOST_AUTO_TEST_CASE(binary_keys_and_values_with_nuls_round_trip) {
  expect_kv_round_trip({std::string("k\0ey", 4), 3, kUuid, "", kBinary});
  expect_kv_round_trip({kBinary, 3, "", "", std::string(1, '\0')});
}

BOOST_AUTO_TEST_CASE(one_mebibyte_value_round_trips) {
  std::string big(1024 * 1024, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7 + 1);
  expect_kv_round_trip({"big", 1, kUuid, "", big});
}

// ---------------------------------------------------------------------------
// Properties and ttl

BOOST_AUTO_TEST_CASE(properties_parse_and_format_round_trip) {
  const std::vector<chp::Property> props{{"ttl", "30"}, {"owner", "a=b"}, {"empty", ""}};
  const std::string text = chp::format_properties(props);
  BOOST_CHECK_EQUAL(text, "ttl=30\nowner=a=b\nempty=\n");
  auto parsed = chp::parse_properties(text);
  BOOST_REQUIRE_MESSAGE(parsed.ok(), failure(parsed));
  BOOST_CHECK(*parsed == props);
}

BOOST_AUTO_TEST_CASE(empty_properties_parse_to_nothing) {
  auto parsed = chp::parse_properties("");
  BOOST_REQUIRE(parsed.ok());
  BOOST_CHECK(parsed->empty());
  BOOST_CHECK_EQUAL(chp::format_properties({}), "");
}

BOOST_AUTO_TEST_CASE(final_property_without_newline_is_accepted) {
  auto parsed = chp::parse_properties("a=1\nttl=9");
  BOOST_REQUIRE_MESSAGE(parsed.ok(), failure(parsed));
  BOOST_CHECK(*parsed == (std::vector<chp::Property>{{"a", "1"}, {"ttl", "9"}}));
}

BOOST_AUTO_TEST_CASE(property_line_without_equals_is_rejected) {
  for (std::string_view text : {"ttl\n", "a=1\nnoequals\n", "=5\n", "a=1\n\nb=2\n"}) {
    BOOST_TEST_CONTEXT("properties '" << text << "'") {
      DecodeResult<std::vector<chp::Property>> parsed = std::vector<chp::Property>{};
      BOOST_CHECK_NO_THROW(parsed = chp::parse_properties(text));
      BOOST_CHECK(!parsed.ok());
      if (!parsed.ok()) BOOST_CHECK(parsed.error().kind == DecodeErrorKind::kBadField);
    }
  }
}

BOOST_AUTO_TEST_CASE(ttl_is_read_from_properties) {
  auto none = chp::ttl_seconds("");
  BOOST_REQUIRE(none.ok());
  BOOST_CHECK_EQUAL(*none, 0u);
  auto zero = chp::ttl_seconds("ttl=0\n");
  BOOST_REQUIRE(zero.ok());
  BOOST_CHECK_EQUAL(*zero, 0u);
  auto thirty = chp::ttl_seconds("owner=x\nttl=30\n");
  BOOST_REQUIRE(thirty.ok());
  BOOST_CHECK_EQUAL(*thirty, 30u);
  auto max = chp::ttl_seconds("ttl=" + std::to_string(chp::Limits{}.max_ttl_seconds));
  BOOST_REQUIRE_MESSAGE(max.ok(), failure(max));
}

BOOST_AUTO_TEST_CASE(bad_ttl_values_are_rejected) {
  const std::string over = std::to_string(chp::Limits{}.max_ttl_seconds + 1);
  for (const std::string value : {"abc", "-1", "", "+5", "5s", " 5", "1.5", "99999999999999999999999", over.c_str()}) {
    BOOST_TEST_CONTEXT("ttl='" << value << "'") {
      DecodeResult<std::uint64_t> ttl = std::uint64_t{0};
      BOOST_CHECK_NO_THROW(ttl = chp::ttl_seconds("ttl=" + value + "\n"));
      BOOST_CHECK(!ttl.ok());
      // ... and a KVSET carrying it is refused.
      expect_error(Decoder::kKvset, kv_frames({"k", 0, kUuid, "ttl=" + value + "\n", "v"}),
                   ttl.ok() ? DecodeErrorKind::kBadField : ttl.error().kind);
    }
  }
}

BOOST_AUTO_TEST_CASE(ttl_limit_is_taken_from_limits) {
  chp::Limits limits;
  limits.max_ttl_seconds = 60;
  BOOST_CHECK(chp::ttl_seconds("ttl=60\n", limits).ok());
  auto over = chp::ttl_seconds("ttl=61\n", limits);
  BOOST_REQUIRE(!over.ok());
  BOOST_CHECK(over.error().kind == DecodeErrorKind::kTooLarge);
}

BOOST_AUTO_TEST_CASE(reserved_keys_are_the_control_commands) {
  BOOST_CHECK(chp::is_reserved_key("HUGZ"));
  BOOST_CHECK(chp::is_reserved_key("KTHXBAI"));
  BOOST_CHECK(chp::is_reserved_key("ICANHAZ?"));
  BOOST_CHECK(!chp::is_reserved_key("HUGZ2"));
  BOOST_CHECK(!chp::is_reserved_key("hugz"));
  BOOST_CHECK(!chp::is_reserved_key(""));
}

// ---------------------------------------------------------------------------
// Malformed input: every decoder returns an error and never throws.

BOOST_AUTO_TEST_CASE(wrong_frame_counts_are_rejected_by_every_decoder) {
  const Frames five = kv_frames(sample_kv());
  for (std::size_t n = 0; n <= 6; ++n) {
    Frames frames(five.begin(), five.begin() + static_cast<std::ptrdiff_t>(std::min(n, five.size())));
    while (frames.size() < n) frames.emplace_back("extra");
    BOOST_TEST_CONTEXT(n << " frames") {
      if (n != 2 && n != 3) expect_error(Decoder::kIcanhaz, frames, DecodeErrorKind::kFrameCount);
      if (n != 5) expect_kv_error(frames, DecodeErrorKind::kFrameCount);
    }
  }
}

BOOST_AUTO_TEST_CASE(control_commands_with_wrong_frame_counts_are_rejected) {
  for (std::size_t n = 0; n <= 6; ++n) {
    if (n == 5) continue;
    Frames kthxbai(n, std::string());
    Frames hugz(n, std::string());
    if (n > 0) kthxbai[0] = "KTHXBAI", hugz[0] = "HUGZ";
    if (n > 1) kthxbai[1] = hugz[1] = chp::encode_sequence(1);
    BOOST_TEST_CONTEXT(n << " frames") {
      expect_error(Decoder::kSnapshotReply, kthxbai, DecodeErrorKind::kFrameCount);
      expect_error(Decoder::kUpdate, hugz, DecodeErrorKind::kFrameCount);
    }
  }
}

BOOST_AUTO_TEST_CASE(sequences_of_seven_and_nine_bytes_are_rejected) {
  for (std::size_t size : {std::size_t{0}, std::size_t{7}, std::size_t{9}}) {
    BOOST_TEST_CONTEXT(size << "-byte sequence") {
      Frames kv = kv_frames(sample_kv());
      kv[1] = std::string(size, '\x01');
      expect_kv_error(kv, DecodeErrorKind::kBadField);

      Frames kthxbai = chp::encode_kthxbai({1, "", {}});
      kthxbai[1] = std::string(size, '\x01');
      expect_error(Decoder::kSnapshotReply, kthxbai, DecodeErrorKind::kBadField);

      Frames hugz = chp::encode_hugz({0});
      hugz[1] = std::string(size, '\0');
      expect_error(Decoder::kUpdate, hugz, DecodeErrorKind::kBadField);
    }
  }
}

BOOST_AUTO_TEST_CASE(uuid_of_fifteen_or_seventeen_bytes_is_rejected) {
  for (std::size_t size : {std::size_t{1}, std::size_t{15}, std::size_t{17}}) {
    BOOST_TEST_CONTEXT(size << "-byte uuid") {
      chp::KvMsg msg = sample_kv();
      msg.uuid = std::string(size, 'u');
      expect_kv_error(kv_frames(msg), DecodeErrorKind::kBadField);
    }
  }
}

BOOST_AUTO_TEST_CASE(empty_uuid_is_accepted) {
  chp::KvMsg msg = sample_kv();
  msg.uuid.clear();
  expect_kv_round_trip(msg);
}

BOOST_AUTO_TEST_CASE(empty_key_is_rejected) {
  chp::KvMsg msg = sample_kv();
  msg.key.clear();
  expect_kv_error(kv_frames(msg), DecodeErrorKind::kBadField);
}

BOOST_AUTO_TEST_CASE(kvset_of_a_reserved_key_is_rejected) {
  for (const char* key : {"HUGZ", "KTHXBAI", "ICANHAZ?"}) {
    BOOST_TEST_CONTEXT("key " << key) {
      expect_error(Decoder::kKvset, kv_frames({key, 0, kUuid, "", "v"}), DecodeErrorKind::kBadField);
    }
  }
}

BOOST_AUTO_TEST_CASE(kvset_with_malformed_properties_is_rejected) {
  expect_error(Decoder::kKvset, kv_frames({"k", 0, kUuid, "noequals\n", "v"}), DecodeErrorKind::kBadField);
  expect_error(Decoder::kKvset, kv_frames({"k", 0, kUuid, "=x\n", "v"}), DecodeErrorKind::kBadField);
}

BOOST_AUTO_TEST_CASE(oversized_fields_are_rejected_against_limits) {
  chp::Limits limits;
  limits.max_key_bytes = 8;
  limits.max_value_bytes = 16;
  limits.max_properties_bytes = 10;

  BOOST_TEST_CONTEXT("key") {
    expect_kv_error(kv_frames({std::string(9, 'k'), 1, "", "", "v"}), DecodeErrorKind::kTooLarge, limits);
  }
  BOOST_TEST_CONTEXT("value") {
    expect_kv_error(kv_frames({"k", 1, "", "", std::string(17, 'v')}), DecodeErrorKind::kTooLarge, limits);
  }
  BOOST_TEST_CONTEXT("properties") {
    expect_kv_error(kv_frames({"k", 1, "", "owner=abcde\n", "v"}), DecodeErrorKind::kTooLarge, limits);
  }
  BOOST_TEST_CONTEXT("icanhaz subtree") {
    expect_error(Decoder::kIcanhaz, chp::encode_icanhaz({std::string(9, 's'), std::nullopt}),
                 DecodeErrorKind::kTooLarge, limits);
  }
  BOOST_TEST_CONTEXT("exactly at the limits") {
    Frames at = kv_frames({std::string(8, 'k'), 1, "", "ttl=1234\n", std::string(16, 'v')});
    auto v = views(at);
    BOOST_CHECK(chp::decode_kvset(v, limits).ok());
    BOOST_CHECK(chp::decode_update(v, limits).ok());
    BOOST_CHECK(chp::decode_snapshot_reply(v, limits).ok());
  }
}

BOOST_AUTO_TEST_CASE(icanhaz_of_one_frame_is_rejected) {
  expect_error(Decoder::kIcanhaz, {"ICANHAZ?"}, DecodeErrorKind::kFrameCount);
  expect_error(Decoder::kIcanhaz, {"ICANHAZ?", "", "", ""}, DecodeErrorKind::kFrameCount);
}

// zstore's resume: a third frame is the requester's last sequence, 8 bytes.
BOOST_AUTO_TEST_CASE(icanhaz_with_a_resume_sequence_round_trips) {
  Frames frames = chp::encode_icanhaz({"/a/", 0x0102030405060708ull});
  BOOST_REQUIRE_EQUAL(frames.size(), 3u);
  BOOST_CHECK_EQUAL(frames[2], std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));
  auto v = views(frames);
  auto decoded = chp::decode_icanhaz(v);
  BOOST_REQUIRE_MESSAGE(decoded.ok(), failure(decoded));
  BOOST_CHECK(*decoded == (chp::Icanhaz{"/a/", 0x0102030405060708ull}));
  BOOST_CHECK_EQUAL(chp::encode_icanhaz({"/a/", std::nullopt}).size(), 2u);  // no resume: the reference request
}

BOOST_AUTO_TEST_CASE(icanhaz_resume_frame_must_be_a_sequence) {
  expect_error(Decoder::kIcanhaz, {"ICANHAZ?", "", ""}, DecodeErrorKind::kBadField);
  expect_error(Decoder::kIcanhaz, {"ICANHAZ?", "", "1234567"}, DecodeErrorKind::kBadField);
}

BOOST_AUTO_TEST_CASE(icanhaz_with_the_wrong_command_is_rejected) {
  for (const std::string& cmd :
       std::vector<std::string>{"ICANHAZ", "icanhaz?", "KTHXBAI", "", std::string("ICANHAZ?\0", 9)}) {
    BOOST_TEST_CONTEXT("command '" << cmd << "'") {
      expect_error(Decoder::kIcanhaz, {cmd, "/a/"}, DecodeErrorKind::kUnknownId);
    }
  }
}

BOOST_AUTO_TEST_CASE(garbage_never_throws_from_any_decoder) {
  const std::vector<Frames> inputs{
      {},
      {""},
      {"", "", "", "", ""},
      {std::string(1, '\0'), std::string(8, '\xff'), std::string(16, '\0'), "\n\n=", std::string(3, '\0')},
      {"KTHXBAI", "", "", "", ""},
      {"HUGZ", "x", "", "", ""},
      {"ICANHAZ?", ""},
      {std::string(70000, 'k'), chp::encode_sequence(1), "", "", ""},
  };
  for (const auto& frames : inputs) {
    for (Decoder d : kDecoders) {
      BOOST_TEST_CONTEXT(name(d) << " on " << frames.size() << " frames") {
        BOOST_CHECK_NO_THROW((void)run(d, frames));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(kvmsg_frames_view_the_same_bytes_as_encode_kvmsg) {
  for (const chp::KvMsg& msg :
       {chp::KvMsg{"k", 0, "", "", "v"},
        chp::KvMsg{kBinary, std::numeric_limits<std::uint64_t>::max(), kUuid, "ttl=5\n", kBinary},
        chp::KvMsg{"key", 0x0102030405060708ull, kUuid, "a=b\n", ""}}) {
    Frames owned = chp::encode_kvmsg(msg);
    chp::KvMsgFrames viewed(msg.key, msg.sequence, msg.uuid, msg.properties, msg.body);
    BOOST_REQUIRE_EQUAL(viewed.frames().size(), owned.size());
    for (std::size_t i = 0; i < owned.size(); ++i) BOOST_CHECK_EQUAL(viewed.frames()[i], owned[i]);
    auto decoded = chp::decode_update(viewed.frames());
    BOOST_REQUIRE_MESSAGE(decoded.ok(), failure(decoded));
    BOOST_REQUIRE(std::holds_alternative<chp::KvMsg>(*decoded));
    BOOST_CHECK(std::get<chp::KvMsg>(*decoded) == msg);
  }
}

BOOST_AUTO_TEST_CASE(kvset_view_points_into_the_frames_and_carries_the_ttl) {
  const Frames frames = chp::encode_kvmsg({"/a/b", 7, kUuid, "colour=red\nttl=30\n", kBinary});
  const auto v = views(frames);
  auto set = chp::decode_kvset_view(v);
  BOOST_REQUIRE_MESSAGE(set, failure(set));
  BOOST_CHECK_EQUAL(set->key, "/a/b");
  BOOST_CHECK(set->key.data() == frames[0].data());  // a view, not a copy
  BOOST_CHECK(set->body.data() == frames[4].data());
  BOOST_CHECK(set->uuid == kUuid);
  BOOST_CHECK_EQUAL(set->properties, "colour=red\nttl=30\n");
  BOOST_CHECK(set->body == kBinary);
  BOOST_CHECK_EQUAL(set->ttl_seconds, 30u);
  auto none = chp::decode_kvset_view(views(chp::encode_kvmsg({"k", 0, "", "", "v"})));
  BOOST_REQUIRE(none);
  BOOST_CHECK_EQUAL(none->ttl_seconds, 0u);
}

BOOST_AUTO_TEST_CASE(kvset_view_rejects_what_decode_kvset_rejects) {
  chp::Limits limits;
  limits.max_ttl_seconds = 100;
  const std::vector<Frames> bad = {
      chp::encode_kvmsg({"", 0, "", "", "v"}),                       // empty key
      chp::encode_kvmsg({std::string(chp::kHugz), 0, "", "", "v"}),  // reserved key
      chp::encode_kvmsg({"k", 0, "", "ttl=abc\n", "v"}),             // ttl not a number
      chp::encode_kvmsg({"k", 0, "", "ttl=101\n", "v"}),             // ttl over the limit
      chp::encode_kvmsg({"k", 0, "", "=x\n", "v"}),                  // property without a name
      Frames{"k", std::string(8, '\0'), "", ""},                     // four frames
  };
  for (const auto& frames : bad) {
    auto view = chp::decode_kvset_view(views(frames), limits);
    auto msg = chp::decode_kvset(views(frames), limits);
    BOOST_CHECK(!view);
    BOOST_CHECK(!msg);
    if (!view && !msg) BOOST_CHECK_EQUAL(view.error().detail, msg.error().detail);
  }
}
