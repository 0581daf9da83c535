// Poller (server/reactor/poller.h): handlers run for ready items only, in
// rank order; a handler may remove or add items during dispatch (a removed
// one is not called, an added one waits for the next poll); a socket
// object given a new socket is polled as the new one; wait() returns after
// its timeout when nothing is ready.
#include "server/reactor/poller.h"

#include <boost/test/unit_test.hpp>

#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

using zstore::server::Poller;

namespace {

// n PAIR socket pairs over inproc: in[i] is polled, out[i] sends to it.
struct Pairs {
  zmq::context_t ctx;
  std::vector<zmq::socket_t> in;
  std::vector<zmq::socket_t> out;
  explicit Pairs(int n) {
    for (int i = 0; i < n; ++i) {
      std::string ep = "inproc://poller-test-" + std::to_string(i);
      in.emplace_back(ctx, zmq::socket_type::pair);
      in.back().bind(ep);
      out.emplace_back(ctx, zmq::socket_type::pair);
      out.back().connect(ep);
    }
  }
  void send(int i) { out[i].send(zmq::str_buffer("x"), zmq::send_flags::none); }
  void drain(int i) {
    zmq::message_t m;
    while (in[i].recv(m, zmq::recv_flags::dontwait)) {
    }
  }
};

constexpr std::chrono::milliseconds kWait{2000};

}  // namespace

BOOST_AUTO_TEST_CASE(handlers_run_for_ready_sockets_only) {
  Pairs p(3);
  Poller poller;
  std::vector<int> called;
  for (int i = 0; i < 3; ++i)
    poller.add(p.in[i], [&, i] {
      called.push_back(i);
      p.drain(i);
    });
  p.send(1);
  BOOST_TEST(poller.wait(kWait) == 1u);
  BOOST_TEST(called == std::vector<int>{1});
  called.clear();
  p.send(0);
  p.send(2);
  while (poller.poll(kWait) < 2) {
  }
  poller.dispatch();
  BOOST_TEST((called == std::vector<int>{0, 2}));
}

BOOST_AUTO_TEST_CASE(handlers_run_by_rank_then_by_addition) {
  Pairs p(3);
  Poller poller;
  std::vector<int> called;
  poller.add(
      p.in[0],
      [&] {
        called.push_back(0);
        p.drain(0);
      },
      5);
  poller.add(
      p.in[1],
      [&] {
        called.push_back(1);
        p.drain(1);
      },
      1);
  poller.add(
      p.in[2],
      [&] {
        called.push_back(2);
        p.drain(2);
      },
      5);
  for (int i = 0; i < 3; ++i) p.send(i);
  while (poller.poll(kWait) < 3) {
  }
  poller.dispatch();
  BOOST_TEST((called == std::vector<int>{1, 0, 2}));
}

BOOST_AUTO_TEST_CASE(an_item_removed_during_dispatch_is_not_called) {
  Pairs p(3);
  Poller poller;
  std::vector<int> called;
  // The first removes the second (ready too) and itself; the third still runs.
  poller.add(p.in[0], [&] {
    called.push_back(0);
    poller.remove(p.in[1]);
    poller.remove(p.in[0]);
  });
  poller.add(p.in[1], [&] { called.push_back(1); });
  poller.add(p.in[2], [&] {
    called.push_back(2);
    p.drain(2);
  });
  for (int i = 0; i < 3; ++i) p.send(i);
  while (poller.poll(kWait) < 3) {
  }
  poller.dispatch();
  BOOST_TEST((called == std::vector<int>{0, 2}));
  BOOST_TEST(poller.size() == 1u);
  called.clear();
  p.send(2);
  poller.wait(kWait);  // in[0] and in[1] still hold a message, but are no longer polled
  BOOST_TEST(called == std::vector<int>{2});
}

BOOST_AUTO_TEST_CASE(an_item_replaced_during_dispatch_runs_its_new_handler_from_the_next_poll) {
  Pairs p(2);
  Poller poller;
  std::vector<std::string> called;
  // in[0]'s handler replaces in[1]'s (ready in this poll too): neither the
  // old nor the new one runs in this dispatch, the new one in the next.
  poller.add(p.in[0], [&] {
    called.push_back("a");
    p.drain(0);
    poller.remove(p.in[1]);
    poller.add(p.in[1], [&] {
      called.push_back("new");
      p.drain(1);
    });
  });
  poller.add(p.in[1], [&] {
    called.push_back("old");
    p.drain(1);
  });
  p.send(0);
  p.send(1);
  while (poller.poll(kWait) < 2) {
  }
  poller.dispatch();
  BOOST_TEST(called == std::vector<std::string>{"a"});
  BOOST_TEST(poller.size() == 2u);
  BOOST_TEST(poller.wait(kWait) == 1u);
  BOOST_TEST((called == std::vector<std::string>{"a", "new"}));
}

BOOST_AUTO_TEST_CASE(an_item_added_during_dispatch_is_polled_from_the_next_poll) {
  Pairs p(2);
  Poller poller;
  std::vector<int> called;
  bool added = false;
  poller.add(p.in[0], [&] {
    called.push_back(0);
    p.drain(0);
    if (!added)
      poller.add(
          p.in[1],
          [&] {
            called.push_back(1);
            p.drain(1);
          },
          -1);
    added = true;
  });
  p.send(1);  // ready before it is added: not called in this dispatch
  p.send(0);
  poller.wait(kWait);
  BOOST_TEST(called == std::vector<int>{0});
  BOOST_TEST(poller.wait(kWait) == 1u);
  BOOST_TEST((called == std::vector<int>{0, 1}));
}

BOOST_AUTO_TEST_CASE(a_socket_given_a_new_socket_is_polled_as_the_new_one) {
  Pairs p(1);
  Poller poller;
  int called = 0;
  poller.add(p.in[0], [&] {
    ++called;
    p.drain(0);
  });
  p.in[0] = zmq::socket_t(p.ctx, zmq::socket_type::pair);  // as a follower's fresh socket
  p.in[0].bind("inproc://poller-test-new");
  zmq::socket_t sender(p.ctx, zmq::socket_type::pair);
  sender.connect("inproc://poller-test-new");
  sender.send(zmq::str_buffer("x"), zmq::send_flags::none);
  BOOST_TEST(poller.wait(kWait) == 1u);
  BOOST_TEST(called == 1);
}

BOOST_AUTO_TEST_CASE(a_descriptor_item_is_ready_and_dispatched) {
  int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  BOOST_REQUIRE(fd >= 0);
  Poller poller;
  int called = 0;
  poller.add(fd, [&] { ++called; });
  BOOST_TEST(poller.poll(std::chrono::milliseconds(0)) == 0u);
  BOOST_TEST(!poller.ready(fd));
  std::uint64_t one = 1;
  BOOST_REQUIRE(::write(fd, &one, sizeof one) == static_cast<ssize_t>(sizeof one));
  BOOST_TEST(poller.poll(kWait) == 1u);
  BOOST_TEST(poller.ready(fd));
  poller.dispatch();
  BOOST_TEST(called == 1);
  BOOST_TEST(!poller.ready(fd));  // dispatched
  poller.remove(fd);
  BOOST_TEST(poller.size() == 0u);
  ::close(fd);
}

BOOST_AUTO_TEST_CASE(wait_returns_after_its_timeout_when_nothing_is_ready) {
  Pairs p(1);
  Poller poller;
  int called = 0;
  poller.add(p.in[0], [&] { ++called; });
  auto start = std::chrono::steady_clock::now();
  BOOST_TEST(poller.wait(std::chrono::milliseconds(50)) == 0u);
  auto waited = std::chrono::steady_clock::now() - start;
  BOOST_TEST(called == 0);
  BOOST_TEST(waited >= std::chrono::milliseconds(45));
  BOOST_TEST(waited < kWait);
}

BOOST_AUTO_TEST_CASE(adding_a_socket_twice_keeps_the_first_handler) {
  Pairs p(1);
  Poller poller;
  std::vector<int> called;
  poller.add(p.in[0], [&] {
    called.push_back(1);
    p.drain(0);
  });
  poller.add(p.in[0], [&] {
    called.push_back(2);
    p.drain(0);
  });
  BOOST_TEST(poller.size() == 1u);
  p.send(0);
  poller.wait(kWait);
  BOOST_TEST(called == std::vector<int>{1});
}
