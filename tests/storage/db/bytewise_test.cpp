// Tests of compare_bytes (storage/db/bytewise.h): the same order as
// std::string's compare (memcmp, then length), which the memtable and a
// batch's sort rely on to agree with RocksDB's BytewiseComparator.
#include "storage/db/bytewise.h"

#include <boost/test/unit_test.hpp>
#include <random>
#include <string>

namespace zstore::storage {
namespace {

int sign(int x) { return (x > 0) - (x < 0); }

int compare(const std::string& a, const std::string& b) {
  return compare_bytes(a.data(), a.size(), b.data(), b.size());
}

BOOST_AUTO_TEST_CASE(orders_bytes_unsigned_then_by_length) {
  BOOST_TEST(compare("", "") == 0);
  BOOST_TEST(compare("", "a") < 0);
  BOOST_TEST(compare("abcdefgh", "abcdefgh") == 0);
  BOOST_TEST(compare("abcdefgh", "abcdefghi") < 0);
  BOOST_TEST(compare("abcdefghi", "abcdefgh") > 0);
  // A byte of 0x80 and more sorts after 0x7f, as unsigned (a char may be signed).
  BOOST_TEST(compare(std::string("\x7f"), std::string("\x80")) < 0);
  BOOST_TEST(compare(std::string("12345678\x7f"), std::string("12345678\x80")) < 0);
  const std::string high_in_first_word = std::string("1234567") + '\xff' + "0";
  BOOST_TEST(compare(high_in_first_word, "123456700") > 0);
  // The first differing byte decides, not a later one in the same word.
  BOOST_TEST(compare("a0000000", "b\x01\x01\x01\x01\x01\x01\x01") < 0);
  BOOST_TEST(compare(std::string("\x01\xff\xff\xff\xff\xff\xff\xff", 8),
                     std::string("\x02\x00\x00\x00\x00\x00\x00\x00", 8)) < 0);
}

// Random strings over a few bytes (so that long common prefixes are
// frequent) of lengths 0-40: the sign of every comparison matches
// std::string's.
BOOST_AUTO_TEST_CASE(matches_std_string_compare_on_random_strings) {
  std::mt19937 rng(12);
  const char alphabet[] = {'\x00', '\x01', 'a', '\x7f', '\x80', '\xff'};
  std::uniform_int_distribution<int> length(0, 40);
  std::uniform_int_distribution<int> pick(0, sizeof alphabet - 1);
  std::uniform_int_distribution<int> coin(0, 3);
  int mismatches = 0;
  for (int i = 0; i < 200000; ++i) {
    std::string a;
    int n = length(rng);
    for (int k = 0; k < n; ++k) a.push_back(alphabet[pick(rng)]);
    std::string b = a;
    // Often a copy changed in one byte or cut or extended: close keys.
    if (coin(rng) == 0 && !b.empty()) b[static_cast<std::size_t>(pick(rng)) % b.size()] = alphabet[pick(rng)];
    if (coin(rng) == 1) b.resize(static_cast<std::size_t>(length(rng)), alphabet[pick(rng)]);
    if (coin(rng) == 2) b.push_back(alphabet[pick(rng)]);
    if (sign(compare(a, b)) != sign(a.compare(b))) ++mismatches;
    if (sign(compare(b, a)) != sign(b.compare(a))) ++mismatches;
  }
  BOOST_TEST(mismatches == 0);
}

}  // namespace
}  // namespace zstore::storage
