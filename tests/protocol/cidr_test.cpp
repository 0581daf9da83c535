// Address ranges of --dafka-peers: parsing and membership, IPv4 and IPv6.
#include <boost/test/unit_test.hpp>

#include "protocol/cidr.h"

using zstore::protocol::in_ranges;
using zstore::protocol::parse_cidr_list;

namespace {
std::vector<zstore::protocol::Cidr> ranges(const std::string& text) {
  std::string error;
  auto r = parse_cidr_list(text, &error);
  BOOST_REQUIRE_MESSAGE(r, error);
  return *r;
}
}  // namespace

BOOST_AUTO_TEST_CASE(ipv4_ranges_match_by_prefix) {
  auto r = ranges("10.0.0.0/8, 192.168.1.7,172.16.0.0/12");
  BOOST_TEST(in_ranges(r, "10.200.3.4"));
  BOOST_TEST(in_ranges(r, "192.168.1.7"));
  BOOST_TEST(!in_ranges(r, "192.168.1.8"));
  BOOST_TEST(in_ranges(r, "172.31.255.255"));
  BOOST_TEST(!in_ranges(r, "172.32.0.0"));
  BOOST_TEST(!in_ranges(r, "127.0.0.1"));
  BOOST_TEST(!in_ranges(r, "localhost"));  // names are never in a range
  BOOST_TEST(in_ranges(ranges("0.0.0.0/0"), "8.8.8.8"));
  BOOST_TEST(!in_ranges(ranges("0.0.0.0/0"), "::1"));
}

BOOST_AUTO_TEST_CASE(ipv6_ranges_match_with_or_without_brackets) {
  auto r = ranges("fd00::/8,::1");
  BOOST_TEST(in_ranges(r, "fd12:3456::1"));
  BOOST_TEST(in_ranges(r, "[::1]"));
  BOOST_TEST(!in_ranges(r, "fe80::1"));
  BOOST_TEST(!in_ranges(r, "10.0.0.1"));
}

BOOST_AUTO_TEST_CASE(malformed_lists_are_refused_naming_the_item) {
  std::string error;
  for (const char* bad : {"", "10.0.0.0/33", "10.0.0/8", "10.0.0.0/", "10.0.0.0/x", "host.example", "::1/129"}) {
    BOOST_TEST(!parse_cidr_list(bad, &error).has_value(), bad);
  }
  BOOST_TEST(!parse_cidr_list("10.0.0.0/8,nope", &error).has_value());
  BOOST_TEST(error.find("'nope'") != std::string::npos, error);
}
