// protocol::parse_host_port, parse_tcp_endpoint, parse_port and
// tcp_endpoint: every accepted form and every way an address can be wrong.
#include "protocol/endpoint.h"

#include <boost/test/unit_test.hpp>
#include <string>

using zstore::protocol::HostPort;
using zstore::protocol::parse_host_port;
using zstore::protocol::parse_port;
using zstore::protocol::parse_tcp_endpoint;
using zstore::protocol::tcp_endpoint;
using zstore::protocol::tcp_endpoint_at_offset;

BOOST_AUTO_TEST_CASE(ports_are_decimal_1_to_65535) {
  BOOST_CHECK(parse_port("1") == 1);
  BOOST_CHECK(parse_port("65535") == 65535);
  BOOST_CHECK(parse_port("05556") == 5556);
  for (const char* bad : {"", "0", "65536", "99999", "100000", "-1", "+1", " 1", "1 ", "0x10", "12a", "1.5"}) {
    BOOST_TEST_CONTEXT("port '" << bad << "'") { BOOST_CHECK(!parse_port(bad)); }
  }
}

BOOST_AUTO_TEST_CASE(host_port_splits_at_the_last_colon) {
  BOOST_CHECK(parse_host_port("127.0.0.1:5556") == (HostPort{"127.0.0.1", 5556}));
  BOOST_CHECK(parse_host_port("node-b.example:1") == (HostPort{"node-b.example", 1}));
  BOOST_CHECK(parse_host_port("[::1]:5580") == (HostPort{"[::1]", 5580}));
  BOOST_CHECK(parse_host_port("*:5003") == (HostPort{"*", 5003}));
  for (const char* bad : {"", ":5556", "host", "host:", "host:0", "host:65536", "host:port", "tcp://"}) {
    BOOST_TEST_CONTEXT("address '" << bad << "'") { BOOST_CHECK(!parse_host_port(bad)); }
  }
}

BOOST_AUTO_TEST_CASE(tcp_endpoints_need_the_scheme_a_host_and_a_port) {
  BOOST_CHECK(parse_tcp_endpoint("tcp://127.0.0.1:5556") == (HostPort{"127.0.0.1", 5556}));
  BOOST_CHECK(parse_tcp_endpoint("tcp://[::1]:65535") == (HostPort{"[::1]", 65535}));
  for (const char* bad : {"127.0.0.1:5556", "tcp://", "tcp://:5556", "tcp://host", "tcp://host:", "udp://h:1",
                          "TCP://h:1", "tcp://h:0", "tcp://h:70000", "ipc:///tmp/x"}) {
    BOOST_TEST_CONTEXT("endpoint '" << bad << "'") { BOOST_CHECK(!parse_tcp_endpoint(bad)); }
  }
}

BOOST_AUTO_TEST_CASE(tcp_endpoint_brackets_ipv6_hosts_and_round_trips) {
  BOOST_CHECK_EQUAL(tcp_endpoint("127.0.0.1", 5556), "tcp://127.0.0.1:5556");
  BOOST_CHECK_EQUAL(tcp_endpoint("::1", 5580), "tcp://[::1]:5580");
  BOOST_CHECK_EQUAL(tcp_endpoint("[::1]", 5580), "tcp://[::1]:5580");
  for (const char* ep : {"tcp://127.0.0.1:1", "tcp://[fe80::1]:65535", "tcp://node.example:5582"}) {
    auto parsed = parse_tcp_endpoint(ep);
    BOOST_REQUIRE(parsed);
    BOOST_CHECK_EQUAL(tcp_endpoint(parsed->host, parsed->port), ep);
  }
}

BOOST_AUTO_TEST_CASE(an_endpoint_at_an_offset_keeps_the_host_and_stays_a_port) {
  BOOST_CHECK(tcp_endpoint_at_offset("tcp://127.0.0.1:5556", 0) == "tcp://127.0.0.1:5556");
  BOOST_CHECK(tcp_endpoint_at_offset("tcp://127.0.0.1:5556", 2) == "tcp://127.0.0.1:5558");
  BOOST_CHECK(tcp_endpoint_at_offset("tcp://[::1]:5580", 1) == "tcp://[::1]:5581");
  BOOST_CHECK(tcp_endpoint_at_offset("tcp://node.example:65534", 1) == "tcp://node.example:65535");
  BOOST_CHECK(!tcp_endpoint_at_offset("tcp://node.example:65535", 1));  // a tower at 65535 has no XPUB port
  BOOST_CHECK(!tcp_endpoint_at_offset("tcp://node.example:65534", 2));  // nor a CHP server its collector
  for (const char* bad : {"tcp://nohost", "udp://h:1", "tcp://:1", "tcp://h:0", "tcp://h:12x", "h:1"}) {
    BOOST_TEST_CONTEXT("base '" << bad << "'") { BOOST_CHECK(!tcp_endpoint_at_offset(bad, 1)); }
  }
}
