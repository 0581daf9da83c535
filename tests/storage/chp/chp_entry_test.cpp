#include "storage/chp/chp_entry.h"

#include <rocksdb/comparator.h>
#include <rocksdb/slice.h>

#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using zstore::storage::chp_entry_expiry;
using zstore::storage::ChpEntry;
using zstore::storage::decode_chp_entry;
using zstore::storage::decode_expiry_key;
using zstore::storage::encode_chp_entry;
using zstore::storage::encode_expiry_key;

namespace {

using namespace std::string_literals;

// Every byte value, twice, NULs included.
std::string all_bytes() {
  std::string s;
  for (int round = 0; round < 2; ++round) {
    for (int b = 0; b < 256; ++b) s.push_back(static_cast<char>(b));
  }
  return s;
}

ChpEntry round_trip(const ChpEntry& entry) {
  ChpEntry decoded;
  decoded.value = "stale";
  BOOST_REQUIRE(decode_chp_entry(encode_chp_entry(entry), &decoded));
  return decoded;
}

bool bytewise_less(std::string_view a, std::string_view b) {
  return rocksdb::BytewiseComparator()->Compare(rocksdb::Slice(a.data(), a.size()),
                                                rocksdb::Slice(b.data(), b.size())) < 0;
}

}  // namespace

BOOST_AUTO_TEST_CASE(entry_round_trips_with_every_field_empty) {
  ChpEntry empty;
  BOOST_CHECK(round_trip(empty) == empty);
  BOOST_CHECK_EQUAL(encode_chp_entry(empty).size(), 8u + 8u + 1u + 4u);
}

// What a write reads of its key's previous entry: the expiry alone, the
// same as a full decode gives; too short an entry is refused.
BOOST_AUTO_TEST_CASE(expiry_is_read_without_decoding_the_entry) {
  ChpEntry entry{7, 0x0102030405060708ull, "uuid", "ttl=5", "value"};
  std::string bytes = encode_chp_entry(entry);
  std::uint64_t at = 0;
  BOOST_REQUIRE(chp_entry_expiry(bytes, &at));
  BOOST_CHECK_EQUAL(at, entry.expires_at_ms);
  BOOST_REQUIRE(chp_entry_expiry(encode_chp_entry(ChpEntry{}), &at));
  BOOST_CHECK_EQUAL(at, 0u);
  BOOST_CHECK(!chp_entry_expiry(std::string_view(bytes).substr(0, 15), &at));
  BOOST_CHECK(chp_entry_expiry(std::string_view(bytes).substr(0, 16), &at));
}

BOOST_AUTO_TEST_CASE(entry_round_trips_binary_fields_with_nuls_and_high_bytes) {
  std::vector<ChpEntry> entries = {
      {1, 0, std::string(16, '\0'), "", "\0"s},
      {std::numeric_limits<std::uint64_t>::max(), std::numeric_limits<std::uint64_t>::max(), std::string(16, '\xff'),
       "ttl=5\nname=\0x\n"s, all_bytes()},
      {0x0102030405060708ull, 1700000000000ull, all_bytes().substr(0, 255), all_bytes(), ""},
      {42, 0, "", "", "\xff\xfe\0\0"s},
      {7, 9, "0123456789abcdef", "", "value"},
  };
  for (const auto& e : entries) {
    ChpEntry decoded = round_trip(e);
    BOOST_CHECK(decoded == e);
    BOOST_CHECK_EQUAL(decoded.uuid.size(), e.uuid.size());
    BOOST_CHECK_EQUAL(decoded.properties.size(), e.properties.size());
    BOOST_CHECK_EQUAL(decoded.value.size(), e.value.size());
  }
}

BOOST_AUTO_TEST_CASE(entry_round_trips_a_16_mib_value) {
  ChpEntry e{99, 123, std::string(16, 'u'), "p=1\n", std::string(16u << 20, '\0')};
  for (std::size_t i = 0; i < e.value.size(); i += 4093) e.value[i] = static_cast<char>(i * 31);
  e.value.back() = '\x7f';
  BOOST_CHECK(round_trip(e) == e);
}

BOOST_AUTO_TEST_CASE(entry_fields_are_big_endian_at_fixed_offsets) {
  std::string bytes = encode_chp_entry({0x0102030405060708ull, 0x1112131415161718ull, "U", "PP", "VVV"});
  BOOST_CHECK_EQUAL(bytes,
                    "\x01\x02\x03\x04\x05\x06\x07\x08"
                    "\x11\x12\x13\x14\x15\x16\x17\x18"
                    "\x01U"
                    "\x00\x00\x00\x02PP"
                    "VVV"s);
}

BOOST_AUTO_TEST_CASE(decode_rejects_every_truncation_before_the_value) {
  ChpEntry e{5, 6, std::string(16, 'u'), "name=value\n", "the value"};
  std::string bytes = encode_chp_entry(e);
  std::size_t value_offset = bytes.size() - e.value.size();
  for (std::size_t n = 0; n < value_offset; ++n) {
    ChpEntry out;
    BOOST_CHECK_MESSAGE(!decode_chp_entry(std::string_view(bytes).substr(0, n), &out),
                        "a " << n << "-byte prefix of a " << bytes.size() << "-byte entry decoded");
  }
  // The value runs to the end of the RocksDB value, which RocksDB frames and
  // checksums: a shorter value is a shorter value, not detectable here.
  ChpEntry out;
  BOOST_REQUIRE(decode_chp_entry(std::string_view(bytes).substr(0, value_offset), &out));
  BOOST_CHECK(out.value.empty());
}

BOOST_AUTO_TEST_CASE(decode_rejects_lengths_that_run_past_the_end) {
  std::string header(16, '\0');
  ChpEntry out;
  // uuid length 255 with nothing after it.
  BOOST_CHECK(!decode_chp_entry(header + "\xff"s, &out));
  // uuid length 2, uuid present, properties length 0xffffffff.
  BOOST_CHECK(!decode_chp_entry(header + "\x02uu\xff\xff\xff\xff"s + "short", &out));
  // properties length one past the end.
  BOOST_CHECK(!decode_chp_entry(header + "\x00\x00\x00\x00\x04pro"s, &out));
  // properties length exactly to the end: an empty value.
  BOOST_REQUIRE(decode_chp_entry(header + "\x00\x00\x00\x00\x03pro"s, &out));
  BOOST_CHECK_EQUAL(out.properties, "pro");
  BOOST_CHECK(out.value.empty());
}

BOOST_AUTO_TEST_CASE(expiry_key_round_trips_binary_and_empty_keys) {
  std::vector<std::pair<std::uint64_t, std::string>> cases = {
      {0, ""}, {1, "k"}, {1700000000123ull, "a\0b"s}, {std::numeric_limits<std::uint64_t>::max(), all_bytes()}};
  for (const auto& [at, key] : cases) {
    std::string bytes = encode_expiry_key(at, key);
    BOOST_CHECK_EQUAL(bytes.size(), 8 + key.size());
    std::uint64_t decoded_at = 0;
    std::string_view decoded_key;
    BOOST_REQUIRE(decode_expiry_key(bytes, &decoded_at, &decoded_key));
    BOOST_CHECK_EQUAL(decoded_at, at);
    BOOST_CHECK(decoded_key == key);
  }
}

BOOST_AUTO_TEST_CASE(decode_expiry_key_rejects_fewer_than_8_bytes) {
  std::string bytes = encode_expiry_key(12345, "");
  for (std::size_t n = 0; n < 8; ++n) {
    std::uint64_t at = 0;
    std::string_view key;
    BOOST_CHECK(!decode_expiry_key(std::string_view(bytes).substr(0, n), &at, &key));
  }
}

BOOST_AUTO_TEST_CASE(earlier_expiry_sorts_first_bytewise_whatever_the_keys) {
  // Pairs (a, b) with a's expiry before b's, chosen across byte boundaries
  // and with keys that would order the other way.
  std::vector<std::pair<std::pair<std::uint64_t, std::string>, std::pair<std::uint64_t, std::string>>> pairs = {
      {{1, "\xff\xff"}, {2, ""}},
      {{255, "z"}, {256, "a"}},
      {{0xffff, "\xff"}, {0x10000, "\0"s}},
      {{0x00ffffffffffffffull, "b"}, {0x0100000000000000ull, "a"}},
      {{0x7fffffffffffffffull, "x"}, {0x8000000000000000ull, "x"}},  // high bit: unsigned order
      {{1700000000000ull, all_bytes()}, {1700000000001ull, ""}},
  };
  for (const auto& [a, b] : pairs) {
    BOOST_CHECK_MESSAGE(bytewise_less(encode_expiry_key(a.first, a.second), encode_expiry_key(b.first, b.second)),
                        a.first << " does not sort before " << b.first);
  }
}

BOOST_AUTO_TEST_CASE(same_expiry_sorts_by_key_bytewise) {
  BOOST_CHECK(bytewise_less(encode_expiry_key(10, "a"), encode_expiry_key(10, "b")));
  BOOST_CHECK(bytewise_less(encode_expiry_key(10, "a"), encode_expiry_key(10, "a\0"s)));
  BOOST_CHECK(bytewise_less(encode_expiry_key(10, "\x7f"), encode_expiry_key(10, "\x80")));
  BOOST_CHECK(!bytewise_less(encode_expiry_key(10, "k"), encode_expiry_key(10, "k")));
}

BOOST_AUTO_TEST_CASE(entry_pieces_joined_are_the_encoded_entry) {
  for (const ChpEntry& entry :
       {ChpEntry{0x0102030405060708ull, 0x1112131415161718ull, "U", "PP", "VVV"}, ChpEntry{0, 0, "", "", ""},
        ChpEntry{~0ull, 1, std::string(16, '\xee'), all_bytes(), all_bytes()}}) {
    zstore::storage::ChpEntryPieces pieces(entry.sequence, entry.expires_at_ms, entry.uuid, entry.properties,
                                           entry.value);
    std::string joined;
    for (std::size_t i = 0; i < zstore::storage::ChpEntryPieces::kCount; ++i) joined.append(pieces.pieces()[i]);
    BOOST_CHECK(joined == encode_chp_entry(entry));
    ChpEntry decoded;
    BOOST_REQUIRE(decode_chp_entry(joined, &decoded));
    BOOST_CHECK(decoded == entry);
  }
}
