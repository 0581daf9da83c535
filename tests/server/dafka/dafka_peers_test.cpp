// zstored --dafka-peers: the store connects only to publishers whose
// announced host is in the ranges, so records from a node elsewhere are
// never received (no ACK) and the refusal is logged; inside, they are.
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <variant>

#include <zmq.hpp>

#include "server/options/options.h"
#include "tests/support/dafka_node.h"
#include "tests/support/test_support.h"
#include "tests/support/zstored.h"

namespace dafka = zstore::protocol::dafka;
using namespace zstore::testing;
using namespace std::chrono_literals;

namespace {

struct Env {
  zmq::context_t ctx;
  std::uint16_t base = free_port_range(3);  // tower T, T+1; store at T+2
  Zstored zstored;
  explicit Env(const std::string& peers)
      : zstored({"--tower-port", std::to_string(base), "--dafka-port", std::to_string(base + 2), "--beacon-interval-ms",
                 "100", "--dafka-peers", peers}) {
    BOOST_REQUIRE_MESSAGE(zstored.start(), zstored.log());
  }
  // A producer beaconing 127.0.0.1 that sends records 0..2 until ACKed or
  // timeout; whether an ACK came.
  bool acked(std::chrono::milliseconds timeout) {
    ScriptedDafkaNode p(ctx, base, {'K', 'F'});
    p.connect("tcp://127.0.0.1:" + std::to_string(base + 2));
    auto is_ack = [](const dafka::Message& m) { return std::holds_alternative<dafka::Ack>(m); };
    return p
        .wait_for(is_ack, timeout,
                  [&] {
                    for (std::uint64_t s = 0; s < 3; ++s) p.send(dafka::Record{"t", p.address(), "t", s, "r"});
                  })
        .has_value();
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(publishers_outside_the_ranges_are_not_connected) {
  Env env("10.0.0.0/8");
  BOOST_TEST(!env.acked(3s));
  BOOST_TEST(env.zstored.log().find("outside --dafka-peers") != std::string::npos, env.zstored.log());
}

BOOST_AUTO_TEST_CASE(publishers_inside_the_ranges_are_connected) {
  Env env("10.0.0.0/8, 127.0.0.0/8");
  BOOST_TEST(env.acked(15s), env.zstored.log());
  BOOST_TEST(env.zstored.log().find("outside --dafka-peers") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_bad_range_is_a_usage_error) {
  const char* argv[] = {"zstored", "--dafka-peers", "10.0.0.0/40"};
  const char* env[] = {nullptr};
  auto out = zstore::server::parse_options(3, argv, env);
  BOOST_TEST(out.exit_code == 2);
  BOOST_TEST(out.message.find("--dafka-peers: '10.0.0.0/40'") != std::string::npos, out.message);
}
