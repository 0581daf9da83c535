#include "protocol/dafka_codec.h"

#include <array>
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/byte_order.h"

namespace dafka = zstore::protocol::dafka;
using zstore::protocol::DecodeErrorKind;
using zstore::protocol::Frames;

namespace {

const std::string kAddrA = "0123456789ABCDEF0123456789ABCDEF";
const std::string kAddrB = "FEDCBA9876543210FEDCBA9876543210";

// The error detail of a failed result, "" for a success (Boost builds check
// messages even when the check passes).
template <typename R>
std::string failure(const R& result) {
  return result.ok() ? std::string() : result.error().detail;
}

std::vector<std::string_view> views(const Frames& frames) { return {frames.begin(), frames.end()}; }

zstore::protocol::DecodeResult<dafka::Message> decode_frames(const Frames& frames, const dafka::Limits& limits = {}) {
  auto v = views(frames);
  return dafka::decode(v, limits);
}

// Decoding `frames` fails with `kind` and a detail containing `detail_part`.
void expect_error(const Frames& frames, DecodeErrorKind kind, std::string_view detail_part = {},
                  const dafka::Limits& limits = {}) {
  auto result = decode_frames(frames, limits);
  BOOST_REQUIRE_MESSAGE(!result.ok(), "decode unexpectedly succeeded");
  BOOST_CHECK_MESSAGE(result.error().kind == kind, "kind is " << to_string(result.error().kind) << ", expected "
                                                              << to_string(kind)
                                                              << " (detail: " << result.error().detail << ")");
  BOOST_CHECK_MESSAGE(result.error().detail.find(detail_part) != std::string::npos,
                      "detail '" << result.error().detail << "' does not mention '" << detail_part << "'");
}

void expect_round_trip(const dafka::Message& msg) {
  Frames frames = dafka::encode(msg);
  const dafka::MsgId id = dafka::id_of(msg);
  const std::size_t want = (id == dafka::MsgId::kRecord || id == dafka::MsgId::kDirectRecord) ? 2 : 1;
  BOOST_CHECK_EQUAL(frames.size(), want);
  auto decoded = decode_frames(frames);
  BOOST_REQUIRE_MESSAGE(decoded.ok(), "decode failed: " << failure(decoded));
  BOOST_CHECK_MESSAGE(*decoded == msg,
                      "decoded " << dafka::to_string(dafka::id_of(*decoded)) << " differs from the encoded message");
}

std::string bytes(std::size_t n, char fill) { return std::string(n, fill); }

const std::string kBinary = std::string("a\0b\0\xff\x01", 6);

// One instance of each message type, with non-trivial fields.
std::vector<dafka::Message> samples() {
  return {
      dafka::Record{"hello", kAddrA, "hello", 7, "one"},
      dafka::DirectRecord{kAddrB, kAddrA, "hello", 8, kBinary},
      dafka::Fetch{kAddrA, kAddrB, "hello", 9, 3},
      dafka::Ack{kAddrA, "hello", 10},
      dafka::Head{"hello", kAddrA, "hello", 11},
      dafka::DirectHead{kAddrB, kAddrA, "hello", 12},
      dafka::GetHeads{"hello", kAddrB},
      dafka::ConsumerHello{kAddrA, kAddrB, {"hello", "", "world"}},
      dafka::StoreHello{kAddrB, kAddrA},
  };
}

// Position of the version byte in frame 0: id, topic, NUL, then version.
std::size_t version_offset(const dafka::Message& msg) {
  return std::visit([](const auto& m) { return 1 + m.topic.size() + 1; }, msg);
}

void check_every_truncation_is_rejected(const dafka::Message& msg) {
  const Frames full = dafka::encode(msg);
  for (std::size_t len = 0; len < full[0].size(); ++len) {
    Frames cut = full;
    cut[0].resize(len);
    BOOST_TEST_CONTEXT(dafka::to_string(dafka::id_of(msg)) << " cut to " << len << " of " << full[0].size()) {
      expect_error(cut, DecodeErrorKind::kTruncated);
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// Round trips

BOOST_AUTO_TEST_CASE(record_round_trips) {
  expect_round_trip(dafka::Record{"hello", kAddrA, "hello", 0, "one"});
  expect_round_trip(dafka::Record{"hello", kAddrA, "hello", std::numeric_limits<std::uint64_t>::max(), ""});
  expect_round_trip(dafka::Record{"t", kAddrA, "t", 42, kBinary});
  expect_round_trip(dafka::Record{"", "", "", 0, ""});
  expect_round_trip(dafka::Record{bytes(1000, 't'), bytes(255, 'p'), bytes(255, 's'), 1, bytes(100000, 'c')});
}

BOOST_AUTO_TEST_CASE(direct_record_round_trips) {
  expect_round_trip(dafka::DirectRecord{kAddrB, kAddrA, "hello", 5, "payload"});
  expect_round_trip(dafka::DirectRecord{kAddrB, kAddrA, "hello", 5, ""});
  expect_round_trip(dafka::DirectRecord{kAddrB, bytes(255, 'p'), bytes(255, 's'), 5, kBinary});
}

BOOST_AUTO_TEST_CASE(record_and_direct_record_decode_to_distinct_types) {
  auto record = decode_frames(dafka::encode(dafka::Record{"x", kAddrA, "x", 1, "c"}));
  auto direct = decode_frames(dafka::encode(dafka::DirectRecord{"x", kAddrA, "x", 1, "c"}));
  BOOST_REQUIRE(record.ok() && direct.ok());
  BOOST_CHECK(std::holds_alternative<dafka::Record>(*record));
  BOOST_CHECK(std::holds_alternative<dafka::DirectRecord>(*direct));
}

BOOST_AUTO_TEST_CASE(fetch_round_trips) {
  expect_round_trip(dafka::Fetch{kAddrA, kAddrB, "hello", 9, 1});
  expect_round_trip(dafka::Fetch{kAddrA, kAddrB, "hello", std::numeric_limits<std::uint64_t>::max(),
                                 std::numeric_limits<std::uint32_t>::max()});
  expect_round_trip(dafka::Fetch{kAddrA, bytes(255, 'a'), bytes(255, 's'), 0, 0});
}

BOOST_AUTO_TEST_CASE(ack_round_trips) {
  expect_round_trip(dafka::Ack{kAddrA, "hello", 10});
  expect_round_trip(dafka::Ack{kAddrA, bytes(255, 's'), 0});
}

BOOST_AUTO_TEST_CASE(head_round_trips) {
  expect_round_trip(dafka::Head{"hello", kAddrA, "hello", 11});
  expect_round_trip(dafka::Head{"hello", bytes(255, 'p'), bytes(255, 's'), 0});
}

BOOST_AUTO_TEST_CASE(direct_head_round_trips) {
  expect_round_trip(dafka::DirectHead{kAddrB, kAddrA, "hello", 12});
  expect_round_trip(dafka::DirectHead{kAddrB, bytes(255, 'p'), bytes(255, 's'), 0});
}

BOOST_AUTO_TEST_CASE(get_heads_round_trips) {
  expect_round_trip(dafka::GetHeads{"hello", kAddrB});
  expect_round_trip(dafka::GetHeads{"", bytes(255, 'a')});
}

BOOST_AUTO_TEST_CASE(consumer_hello_round_trips) {
  expect_round_trip(dafka::ConsumerHello{kAddrA, kAddrB, {"hello", "world"}});
  expect_round_trip(dafka::ConsumerHello{kAddrA, kAddrB, {}});
  expect_round_trip(dafka::ConsumerHello{kAddrA, kAddrB, {"", kBinary, bytes(255, 's'), bytes(1000, 'l')}});
  std::vector<std::string> many;
  for (int i = 0; i < 1000; ++i) many.push_back("topic-" + std::to_string(i));
  expect_round_trip(dafka::ConsumerHello{kAddrA, bytes(255, 'a'), many});
}

BOOST_AUTO_TEST_CASE(store_hello_round_trips) {
  expect_round_trip(dafka::StoreHello{kAddrB, kAddrA});
  expect_round_trip(dafka::StoreHello{kAddrB, bytes(255, 'a')});
}

BOOST_AUTO_TEST_CASE(topic_may_hold_any_byte_but_nul) {
  expect_round_trip(dafka::Head{std::string("\x01\xff") + " topic/with spaces", kAddrA, "s", 1});
}

BOOST_AUTO_TEST_CASE(encode_of_variant_matches_encode_of_struct) {
  BOOST_CHECK(dafka::encode(dafka::Message{dafka::Ack{kAddrA, "s", 3}}) == dafka::encode(dafka::Ack{kAddrA, "s", 3}));
  for (const auto& msg : samples()) {
    Frames via_struct = std::visit([](const auto& m) { return dafka::encode(m); }, msg);
    BOOST_CHECK(dafka::encode(msg) == via_struct);
  }
}

// ---------------------------------------------------------------------------
// Byte-exact forms from DAFKA-WIRE.md

BOOST_AUTO_TEST_CASE(record_matches_the_reference_example_bytes) {
  // 4d 'hello' 00 01 | 20 <32 hex chars> | 05 'hello' | 00 x8 ; frame 1 = 'one'
  std::string expected;
  expected.push_back('\x4d');
  expected += "hello";
  expected.push_back('\x00');
  expected.push_back('\x01');
  expected.push_back('\x20');
  expected += kAddrA;
  expected.push_back('\x05');
  expected += "hello";
  expected.append(8, '\x00');
  BOOST_REQUIRE_EQUAL(expected.size(), 55u);

  const dafka::Record record{"hello", kAddrA, "hello", 0, "one"};
  const Frames frames = dafka::encode(record);
  BOOST_REQUIRE_EQUAL(frames.size(), 2u);
  BOOST_CHECK(frames[0] == expected);
  BOOST_CHECK_EQUAL(frames[1], "one");

  auto decoded = decode_frames(Frames{expected, "one"});
  BOOST_REQUIRE_MESSAGE(decoded.ok(), failure(decoded));
  BOOST_CHECK(*decoded == dafka::Message{record});
}

BOOST_AUTO_TEST_CASE(fetch_puts_address_subject_sequence_then_u32_count) {
  std::string expected = "F" + kAddrA;
  expected.push_back('\x00');
  expected.push_back('\x01');
  expected.push_back('\x20');
  expected += kAddrB;
  expected.push_back('\x02');
  expected += "ab";
  zstore::protocol::put_be<std::uint64_t>(expected, 0x0102030405060708ull);
  zstore::protocol::put_be<std::uint32_t>(expected, 0x0a0b0c0du);
  BOOST_CHECK(dafka::encode(dafka::Fetch{kAddrA, kAddrB, "ab", 0x0102030405060708ull, 0x0a0b0c0du}) ==
              Frames{expected});
}

BOOST_AUTO_TEST_CASE(ack_has_no_address_field) {
  std::string expected = "K" + kAddrA;
  expected.push_back('\x00');
  expected.push_back('\x01');
  expected.push_back('\x01');
  expected += "s";
  zstore::protocol::put_be<std::uint64_t>(expected, 5);
  BOOST_CHECK(dafka::encode(dafka::Ack{kAddrA, "s", 5}) == Frames{expected});
}

BOOST_AUTO_TEST_CASE(consumer_hello_subjects_are_count_then_length_prefixed) {
  std::string expected = "W" + kAddrB;
  expected.push_back('\x00');
  expected.push_back('\x01');
  expected.push_back('\x20');
  expected += kAddrA;
  zstore::protocol::put_be<std::uint32_t>(expected, 2);
  zstore::protocol::put_be<std::uint32_t>(expected, 3);
  expected += "abc";
  zstore::protocol::put_be<std::uint32_t>(expected, 0);
  BOOST_CHECK(dafka::encode(dafka::ConsumerHello{kAddrB, kAddrA, {"abc", ""}}) == Frames{expected});

  std::string empty_list = "W" + kAddrB;
  empty_list.push_back('\x00');
  empty_list.push_back('\x01');
  empty_list.push_back('\x20');
  empty_list += kAddrA;
  empty_list.append(4, '\x00');
  BOOST_CHECK(dafka::encode(dafka::ConsumerHello{kAddrB, kAddrA, {}}) == Frames{empty_list});
}

BOOST_AUTO_TEST_CASE(every_message_starts_with_its_subscription) {
  for (const auto& msg : samples()) {
    const std::string topic = std::visit([](const auto& m) { return m.topic; }, msg);
    const std::string sub = dafka::subscription(dafka::id_of(msg), topic);
    BOOST_CHECK(dafka::encode(msg)[0].starts_with(sub));
    BOOST_CHECK_EQUAL(dafka::encode(msg)[0][sub.size()], '\0');
  }
}

BOOST_AUTO_TEST_CASE(subscription_is_id_then_topic_without_nul) {
  BOOST_CHECK_EQUAL(dafka::subscription(dafka::MsgId::kRecord, "hello"), "Mhello");
  BOOST_CHECK_EQUAL(dafka::subscription(dafka::MsgId::kStoreHello, kAddrA), "L" + kAddrA);
  BOOST_CHECK_EQUAL(dafka::subscription(dafka::MsgId::kFetch, ""), "F");
}

// ---------------------------------------------------------------------------
// Names and addresses

BOOST_AUTO_TEST_CASE(message_ids_have_rfc_names) {
  BOOST_CHECK_EQUAL(dafka::to_string(dafka::MsgId::kRecord), "RECORD");
  BOOST_CHECK_EQUAL(dafka::to_string(dafka::MsgId::kDirectRecord), "DIRECT-RECORD");
  BOOST_CHECK_EQUAL(dafka::to_string(dafka::MsgId::kFetch), "FETCH");
  BOOST_CHECK_EQUAL(dafka::to_string(dafka::MsgId::kAck), "ACK");
  BOOST_CHECK_EQUAL(dafka::to_string(dafka::MsgId::kHead), "HEAD");
  BOOST_CHECK_EQUAL(dafka::to_string(dafka::MsgId::kDirectHead), "DIRECT-HEAD");
  BOOST_CHECK_EQUAL(dafka::to_string(dafka::MsgId::kGetHeads), "GET-HEADS");
  BOOST_CHECK_EQUAL(dafka::to_string(dafka::MsgId::kConsumerHello), "CONSUMER-HELLO");
  BOOST_CHECK_EQUAL(dafka::to_string(dafka::MsgId::kStoreHello), "STORE-HELLO");
  BOOST_CHECK_EQUAL(dafka::to_string(static_cast<dafka::MsgId>('Z')), "UNKNOWN");
}

BOOST_AUTO_TEST_CASE(id_of_names_the_held_message) {
  const std::vector<dafka::MsgId> ids = {
      dafka::MsgId::kRecord,   dafka::MsgId::kDirectRecord,  dafka::MsgId::kFetch,
      dafka::MsgId::kAck,      dafka::MsgId::kHead,          dafka::MsgId::kDirectHead,
      dafka::MsgId::kGetHeads, dafka::MsgId::kConsumerHello, dafka::MsgId::kStoreHello};
  const auto all = samples();
  BOOST_REQUIRE_EQUAL(all.size(), ids.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    BOOST_CHECK(dafka::id_of(all[i]) == ids[i]);
    BOOST_CHECK_EQUAL(dafka::encode(all[i])[0][0], static_cast<char>(ids[i]));
  }
}

BOOST_AUTO_TEST_CASE(address_is_32_uppercase_hex_of_the_uuid) {
  const std::array<std::uint8_t, 16> uuid = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                                             0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
  BOOST_CHECK_EQUAL(dafka::make_address(uuid), kAddrA);
  unsigned char raw[16] = {0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10,
                           0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10};
  BOOST_CHECK_EQUAL(dafka::make_address(raw), kAddrB);
  const std::array<std::uint8_t, 16> zeros{};
  BOOST_CHECK_EQUAL(dafka::make_address(zeros), std::string(32, '0'));
  BOOST_CHECK(dafka::is_valid_address(dafka::make_address(uuid)));
}

BOOST_AUTO_TEST_CASE(only_32_uppercase_hex_characters_are_an_address) {
  BOOST_CHECK(dafka::is_valid_address(kAddrA));
  BOOST_CHECK(dafka::is_valid_address(std::string(32, 'F')));
  BOOST_CHECK(!dafka::is_valid_address("0123456789abcdef0123456789abcdef"));
  BOOST_CHECK(!dafka::is_valid_address(kAddrA.substr(1)));
  BOOST_CHECK(!dafka::is_valid_address(kAddrA + "0"));
  BOOST_CHECK(!dafka::is_valid_address("G123456789ABCDEF0123456789ABCDEF"));
  BOOST_CHECK(!dafka::is_valid_address(std::string("0123456789ABCDEF0123456789ABCDE\0", 32)));
  BOOST_CHECK(!dafka::is_valid_address(""));
}

// ---------------------------------------------------------------------------
// Encoding preconditions

BOOST_AUTO_TEST_CASE(short_strings_hold_at_most_255_bytes) {
  BOOST_CHECK(dafka::fits_short_string(""));
  BOOST_CHECK(dafka::fits_short_string(bytes(255, 'x')));
  BOOST_CHECK(!dafka::fits_short_string(bytes(256, 'x')));
}

BOOST_AUTO_TEST_CASE(encoding_an_over_long_string_field_throws) {
  BOOST_CHECK_THROW(dafka::encode(dafka::Record{"t", bytes(256, 'p'), "s", 0, ""}), std::length_error);
  BOOST_CHECK_THROW(dafka::encode(dafka::Fetch{"t", kAddrA, bytes(256, 's'), 0, 1}), std::length_error);
  BOOST_CHECK_THROW(dafka::encode(dafka::Ack{"t", bytes(300, 's'), 0}), std::length_error);
  BOOST_CHECK_THROW(dafka::encode(dafka::GetHeads{"t", bytes(256, 'a')}), std::length_error);
  BOOST_CHECK_THROW(dafka::encode(dafka::Message{dafka::StoreHello{"t", bytes(256, 'a')}}), std::length_error);
}

BOOST_AUTO_TEST_CASE(encoding_a_topic_with_nul_throws) {
  BOOST_CHECK(!dafka::is_valid_topic(std::string("a\0b", 3)));
  BOOST_CHECK(dafka::is_valid_topic("hello"));
  BOOST_CHECK(dafka::is_valid_topic(""));
  BOOST_CHECK_THROW(dafka::encode(dafka::Head{std::string("a\0b", 3), kAddrA, "s", 1}), std::invalid_argument);
}

// ---------------------------------------------------------------------------
// Malformed input

BOOST_AUTO_TEST_CASE(truncated_record_is_rejected) { check_every_truncation_is_rejected(samples()[0]); }
BOOST_AUTO_TEST_CASE(truncated_direct_record_is_rejected) { check_every_truncation_is_rejected(samples()[1]); }
BOOST_AUTO_TEST_CASE(truncated_fetch_is_rejected) { check_every_truncation_is_rejected(samples()[2]); }
BOOST_AUTO_TEST_CASE(truncated_ack_is_rejected) { check_every_truncation_is_rejected(samples()[3]); }
BOOST_AUTO_TEST_CASE(truncated_head_is_rejected) { check_every_truncation_is_rejected(samples()[4]); }
BOOST_AUTO_TEST_CASE(truncated_direct_head_is_rejected) { check_every_truncation_is_rejected(samples()[5]); }
BOOST_AUTO_TEST_CASE(truncated_get_heads_is_rejected) { check_every_truncation_is_rejected(samples()[6]); }
BOOST_AUTO_TEST_CASE(truncated_consumer_hello_is_rejected) {
  check_every_truncation_is_rejected(samples()[7]);
  check_every_truncation_is_rejected(dafka::ConsumerHello{kAddrA, kAddrB, {}});
  check_every_truncation_is_rejected(dafka::ConsumerHello{kAddrA, kAddrB, {"x", ""}});
}
BOOST_AUTO_TEST_CASE(truncated_store_hello_is_rejected) { check_every_truncation_is_rejected(samples()[8]); }

BOOST_AUTO_TEST_CASE(trailing_byte_after_last_field_is_rejected) {
  for (const auto& msg : samples()) {
    Frames frames = dafka::encode(msg);
    frames[0].push_back('\x00');
    BOOST_TEST_CONTEXT(dafka::to_string(dafka::id_of(msg))) {
      expect_error(frames, DecodeErrorKind::kTrailing, "trailing");
    }
  }
}

BOOST_AUTO_TEST_CASE(record_without_content_frame_is_rejected) {
  Frames frames = dafka::encode(dafka::Record{"hello", kAddrA, "hello", 0, "one"});
  frames.pop_back();
  expect_error(frames, DecodeErrorKind::kFrameCount, "RECORD");
  Frames direct = dafka::encode(dafka::DirectRecord{kAddrB, kAddrA, "hello", 0, "one"});
  direct.pop_back();
  expect_error(direct, DecodeErrorKind::kFrameCount, "DIRECT-RECORD");
}

BOOST_AUTO_TEST_CASE(wrong_frame_count_is_rejected) {
  expect_error(Frames{}, DecodeErrorKind::kFrameCount, "no frames");
  for (const auto& msg : samples()) {
    const Frames good = dafka::encode(msg);
    BOOST_TEST_CONTEXT(dafka::to_string(dafka::id_of(msg))) {
      Frames more = good;
      more.push_back("extra");
      expect_error(more, DecodeErrorKind::kFrameCount, "frames");
      more.push_back("extra");
      expect_error(more, DecodeErrorKind::kFrameCount, "frames");
      if (good.size() == 2) expect_error(Frames{good[0]}, DecodeErrorKind::kFrameCount, "frames");
    }
  }
  // FETCH with a second frame, RECORD with three.
  Frames fetch = dafka::encode(dafka::Fetch{kAddrA, kAddrB, "s", 0, 1});
  expect_error(Frames{fetch[0], ""}, DecodeErrorKind::kFrameCount, "FETCH: expected 1 frames, got 2");
  Frames record = dafka::encode(dafka::Record{"t", kAddrA, "t", 0, "c"});
  expect_error(Frames{record[0], record[1], ""}, DecodeErrorKind::kFrameCount, "RECORD: expected 2 frames, got 3");
}

BOOST_AUTO_TEST_CASE(version_other_than_1_is_rejected) {
  for (const auto& msg : samples()) {
    for (char version : {'\x00', '\x02', '\xff'}) {
      Frames frames = dafka::encode(msg);
      frames[0][version_offset(msg)] = version;
      BOOST_TEST_CONTEXT(dafka::to_string(dafka::id_of(msg)) << " version " << int(version)) {
        expect_error(frames, DecodeErrorKind::kBadVersion, "version");
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(unknown_message_id_is_rejected) {
  for (char id : {'X', 'm', 'B', 'A', '\x00', '\xaa', '\xff'}) {
    Frames frames = dafka::encode(dafka::GetHeads{"hello", kAddrB});
    frames[0][0] = id;
    BOOST_TEST_CONTEXT("id " << int(id)) { expect_error(frames, DecodeErrorKind::kUnknownId, "unknown"); }
  }
  expect_error(Frames{std::string("\xaa\xa5", 2)}, DecodeErrorKind::kUnknownId, "0xAA");
}

BOOST_AUTO_TEST_CASE(empty_frame_0_is_rejected) {
  expect_error(Frames{""}, DecodeErrorKind::kTruncated, "empty");
  expect_error(Frames{"", "content"}, DecodeErrorKind::kTruncated, "empty");
}

BOOST_AUTO_TEST_CASE(topic_without_nul_is_rejected) {
  expect_error(Frames{"Mhello", "one"}, DecodeErrorKind::kTruncated, "NUL");
  expect_error(Frames{"G"}, DecodeErrorKind::kTruncated, "NUL");
  expect_error(Frames{"L" + kAddrA + "\x01\x20" + kAddrB}, DecodeErrorKind::kTruncated, "NUL");
}

BOOST_AUTO_TEST_CASE(missing_version_byte_is_rejected) {
  expect_error(Frames{std::string("Khello\0", 7)}, DecodeErrorKind::kTruncated, "version");
  expect_error(Frames{std::string("M\0", 2), ""}, DecodeErrorKind::kTruncated, "version");
}

BOOST_AUTO_TEST_CASE(truncated_field_detail_names_the_field) {
  Frames frames = dafka::encode(dafka::Fetch{kAddrA, kAddrB, "hello", 9, 3});
  frames[0].resize(frames[0].size() - 2);
  expect_error(frames, DecodeErrorKind::kTruncated, "FETCH: count");
  Frames ack = dafka::encode(dafka::Ack{kAddrA, "hello", 1});
  ack[0].resize(ack[0].size() - 9);
  expect_error(ack, DecodeErrorKind::kTruncated, "ACK: subject");
}

BOOST_AUTO_TEST_CASE(string_length_beyond_frame_is_rejected) {
  std::string frame = "L" + kAddrA;
  frame.push_back('\x00');
  frame.push_back('\x01');
  frame.push_back('\xff');  // claims 255 bytes
  frame += "short";
  expect_error(Frames{frame}, DecodeErrorKind::kTruncated, "address");
}

namespace {

std::string consumer_hello_header() {
  std::string frame = "W" + kAddrA;
  frame.push_back('\x00');
  frame.push_back('\x01');
  frame.push_back('\x20');
  frame += kAddrB;
  return frame;
}

}  // namespace

BOOST_AUTO_TEST_CASE(huge_strings_count_is_rejected_without_allocating) {
  std::string frame = consumer_hello_header();
  zstore::protocol::put_be<std::uint32_t>(frame, 0xffffffffu);
  expect_error(Frames{frame}, DecodeErrorKind::kTruncated, "subjects");
  frame += "some bytes but nowhere near enough";
  expect_error(Frames{frame}, DecodeErrorKind::kTruncated, "subjects");

  // Even with no subject limit, the count is checked against the bytes left
  // before anything is reserved (reserving 2^32 strings would throw
  // std::bad_alloc out of decode, or trip ASan).
  dafka::Limits unlimited;
  unlimited.max_subjects = std::numeric_limits<std::size_t>::max();
  expect_error(Frames{frame}, DecodeErrorKind::kTruncated, "count 4294967295", unlimited);
}

BOOST_AUTO_TEST_CASE(strings_count_over_limit_is_rejected) {
  Frames frames = dafka::encode(dafka::ConsumerHello{kAddrA, kAddrB, {"a", "b", "c"}});
  dafka::Limits limits;
  limits.max_subjects = 2;
  expect_error(frames, DecodeErrorKind::kTooLarge, "subjects count 3", limits);
  limits.max_subjects = 3;
  BOOST_CHECK(decode_frames(frames, limits).ok());
}

BOOST_AUTO_TEST_CASE(strings_entry_longer_than_frame_is_rejected) {
  std::string frame = consumer_hello_header();
  zstore::protocol::put_be<std::uint32_t>(frame, 1);
  zstore::protocol::put_be<std::uint32_t>(frame, 0xffffffffu);
  frame += "abc";
  expect_error(Frames{frame}, DecodeErrorKind::kTruncated, "subjects[0]");
}

BOOST_AUTO_TEST_CASE(oversized_content_is_rejected) {
  dafka::Limits limits;
  limits.max_content_bytes = 4;
  expect_error(dafka::encode(dafka::Record{"t", kAddrA, "t", 0, "12345"}), DecodeErrorKind::kTooLarge, "content",
               limits);
  expect_error(dafka::encode(dafka::DirectRecord{kAddrB, kAddrA, "t", 0, "12345"}), DecodeErrorKind::kTooLarge,
               "content", limits);
  BOOST_CHECK(decode_frames(dafka::encode(dafka::Record{"t", kAddrA, "t", 0, "1234"}), limits).ok());
}

BOOST_AUTO_TEST_CASE(oversized_frame_0_is_rejected) {
  dafka::Limits limits;
  limits.max_frame_bytes = 64;
  expect_error(dafka::encode(dafka::Head{bytes(100, 't'), kAddrA, "t", 0}), DecodeErrorKind::kTooLarge, "frame 0",
               limits);
  BOOST_CHECK(decode_frames(dafka::encode(dafka::Ack{"t", "s", 0}), limits).ok());
}

BOOST_AUTO_TEST_CASE(default_limits_accept_64_mib_content) {
  const dafka::Limits limits;
  BOOST_CHECK_EQUAL(limits.max_content_bytes, 64u << 20);
  BOOST_CHECK_EQUAL(limits.max_subjects, 65536u);
  BOOST_CHECK_GE(limits.max_frame_bytes, 65536u * (4 + 255));
}

BOOST_AUTO_TEST_CASE(random_corruption_never_crashes) {
  // Flip, drop and insert bytes at random in every message type; decode must
  // either succeed or report an error (ASan/UBSan builds check the rest).
  std::mt19937 rng(46);
  const auto all = samples();
  int rejected = 0;
  for (int round = 0; round < 20000; ++round) {
    Frames frames = dafka::encode(all[round % all.size()]);
    std::string& f = frames[0];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !f.empty(); ++e) {
      const std::size_t at = rng() % f.size();
      switch (rng() % 3) {
        case 0:
          f[at] = static_cast<char>(rng());
          break;
        case 1:
          f.erase(at, 1);
          break;
        default:
          f.insert(at, 1, static_cast<char>(rng()));
          break;
      }
    }
    auto result = decode_frames(frames);
    if (!result.ok()) {
      ++rejected;
      BOOST_CHECK(!result.error().detail.empty());
    }
  }
  BOOST_CHECK_GT(rejected, 0);
}

BOOST_AUTO_TEST_CASE(direct_record_header_is_the_first_frame_of_encode_and_reuses_the_buffer) {
  std::string header = std::string(500, 'x');  // stale content, more capacity than needed
  const char* buffer = header.data();
  for (const dafka::DirectRecord& msg :
       {dafka::DirectRecord{"0123456789ABCDEF0123456789ABCDEF", "FEDCBA9876543210FEDCBA9876543210", "hello", 7, "c"},
        dafka::DirectRecord{"T", "P", std::string(255, 's'), ~std::uint64_t{0}, ""}}) {
    dafka::encode_direct_record_header(msg.topic, msg.partition, msg.subject, msg.sequence, &header);
    Frames frames = dafka::encode(msg);
    BOOST_CHECK(header == frames[0]);
    BOOST_CHECK(header.data() == buffer);
  }
  BOOST_CHECK_THROW(dafka::encode_direct_record_header(std::string("a\0b", 3), "P", "s", 1, &header),
                    std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(direct_record_sequence_is_rewritten_in_place) {
  const std::string topic = "0123456789ABCDEF0123456789ABCDEF";
  const std::string partition = "FEDCBA9876543210FEDCBA9876543210";
  std::string header;
  dafka::encode_direct_record_header(topic, partition, "hello", 7, &header);
  const char* buffer = header.data();
  for (std::uint64_t sequence : {std::uint64_t{0}, std::uint64_t{8}, std::uint64_t{1} << 40, ~std::uint64_t{0}}) {
    dafka::set_direct_record_sequence(sequence, &header);
    std::string expected;
    dafka::encode_direct_record_header(topic, partition, "hello", sequence, &expected);
    BOOST_CHECK(header == expected);
    BOOST_CHECK(header.data() == buffer);
    Frames frames{header, "c"};
    auto decoded = decode_frames(frames);
    BOOST_REQUIRE(decoded);
    BOOST_CHECK_EQUAL(std::get<dafka::DirectRecord>(*decoded).sequence, sequence);
  }
  std::string short_header = "D";
  BOOST_CHECK_THROW(dafka::set_direct_record_sequence(1, &short_header), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(topics_are_nonempty_well_formed_utf8_without_control_characters) {
  BOOST_CHECK(dafka::is_valid_topic_name("hello"));
  BOOST_CHECK(dafka::is_valid_topic_name("logs/app.1 x"));
  BOOST_CHECK(dafka::is_valid_topic_name("caf\xc3\xa9"));       // U+00E9
  BOOST_CHECK(dafka::is_valid_topic_name("\xe2\x82\xac"));      // U+20AC
  BOOST_CHECK(dafka::is_valid_topic_name("\xf0\x9f\x98\x80"));  // U+1F600
  BOOST_CHECK(dafka::is_valid_topic_name(std::string(255, 't')));
  BOOST_CHECK(!dafka::is_valid_topic_name(""));
  BOOST_CHECK(!dafka::is_valid_topic_name(std::string(256, 't')));
  BOOST_CHECK(!dafka::is_valid_topic_name("bad\xff"));
  BOOST_CHECK(!dafka::is_valid_topic_name("\x80"));              // a continuation byte alone
  BOOST_CHECK(!dafka::is_valid_topic_name("\xc3"));              // truncated
  BOOST_CHECK(!dafka::is_valid_topic_name("\xc0\xaf"));          // overlong '/'
  BOOST_CHECK(!dafka::is_valid_topic_name("\xe0\x80\xaf"));      // overlong
  BOOST_CHECK(!dafka::is_valid_topic_name("\xed\xa0\x80"));      // surrogate U+D800
  BOOST_CHECK(!dafka::is_valid_topic_name("\xf4\x90\x80\x80"));  // past U+10FFFF
  BOOST_CHECK(!dafka::is_valid_topic_name(std::string("a\0b", 3)));
  BOOST_CHECK(!dafka::is_valid_topic_name("line\nbreak"));
  BOOST_CHECK(!dafka::is_valid_topic_name("del\x7f"));
  BOOST_CHECK(!dafka::is_valid_topic_name("c1\xc2\x85"));  // U+0085
}
