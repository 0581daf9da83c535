// testing::free_port_range: the ports it hands out stay reserved for the
// test process (no one else binds them, the kernel gives them to no one),
// while a server in this process or a child still binds and listens on them,
// also again after a restart.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <cstdint>
#include <set>
#include <string>

#include <zmq.hpp>

#include "tests/support/test_support.h"

using zstore::testing::free_port_range;

namespace {

// Binds a plain TCP socket (no SO_REUSEADDR) to 127.0.0.1:port; returns
// errno (0 on success) and the port bound in *bound.
int plain_bind(std::uint16_t port, std::uint16_t* bound = nullptr) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  BOOST_REQUIRE_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int err = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 ? 0 : errno;
  socklen_t len = sizeof addr;
  if (err == 0 && bound != nullptr && ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    *bound = ntohs(addr.sin_port);
  }
  ::close(fd);
  return err;
}

std::string endpoint(std::uint16_t port) { return "tcp://127.0.0.1:" + std::to_string(port); }

}  // namespace

BOOST_AUTO_TEST_CASE(a_reserved_range_cannot_be_bound_by_anyone_else) {
  std::uint16_t base = free_port_range(3);
  for (int i = 0; i < 3; ++i) {
    BOOST_CHECK_MESSAGE(plain_bind(static_cast<std::uint16_t>(base + i)) == EADDRINUSE,
                        "port " << base + i << " of the range could be bound by another socket");
  }
}

BOOST_AUTO_TEST_CASE(the_kernel_hands_out_no_reserved_port) {
  std::set<std::uint16_t> reserved;
  for (int r = 0; r < 20; ++r) {
    std::uint16_t base = free_port_range(3);
    for (int i = 0; i < 3; ++i) BOOST_CHECK(reserved.insert(static_cast<std::uint16_t>(base + i)).second);
  }
  for (int i = 0; i < 2000; ++i) {
    std::uint16_t got = 0;
    BOOST_REQUIRE_EQUAL(plain_bind(0, &got), 0);
    BOOST_REQUIRE_MESSAGE(!reserved.contains(got), "bind(0) got reserved port " << got);
  }
}

BOOST_AUTO_TEST_CASE(a_server_binds_a_reserved_range_and_again_after_a_restart) {
  std::uint16_t base = free_port_range(3);
  for (int start = 0; start < 2; ++start) {
    zmq::context_t ctx;  // ended (its listeners closed) before the next start, as a server process ends
    zmq::socket_t router(ctx, zmq::socket_type::router);
    zmq::socket_t pub(ctx, zmq::socket_type::pub);
    zmq::socket_t sub(ctx, zmq::socket_type::sub);
    for (auto* s : {&router, &pub, &sub}) s->set(zmq::sockopt::linger, 0);
    router.bind(endpoint(base));
    pub.bind(endpoint(base + 1));
    sub.bind(endpoint(base + 2));
    zmq::socket_t dealer(ctx, zmq::socket_type::dealer);
    dealer.set(zmq::sockopt::linger, 0);
    dealer.connect(endpoint(base));
    dealer.send(zmq::str_buffer("ping"), zmq::send_flags::none);
    zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
    BOOST_REQUIRE_MESSAGE(zmq::poll(&item, 1, zstore::testing::scaled(std::chrono::seconds(10))) == 1,
                          "no message through the server bound on the reserved port, start " << start);
  }
}
