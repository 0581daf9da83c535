// In-process HttpServer: binding (port 0, "*", a port in use), and stop():
// idempotent, closing the connections still sending their heads at once,
// and answering a request already being handled before it returns.
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <thread>

#include "server/http/http_server.h"
#include "tests/ops/ops_support.h"

using namespace zstore;
using namespace zstore::server;
using zstore::testing::TempDir;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

struct Fixture {
  TempDir dir;
  std::unique_ptr<storage::Database> db;
  ServerView view;
  Fixture() {
    auto s = storage::Database::Open(dir.str(), storage::DatabaseOptions{}, &db);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.message());
    view.db = db.get();
  }
};

// A loopback connection whose reads give up after 5 s; -1 if it failed.
int connect_to(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string send_and_read(int fd, const std::string& data) {
  ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return out;
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(port_0_is_ephemeral_star_is_every_interface_and_a_port_in_use_is_named, Fixture) {
  HttpConfig config;
  config.bind = "*";
  HttpServer first(config, view);
  first.start();
  BOOST_TEST(first.port() != 0);
  BOOST_TEST(testing::http_request(first.port(), "GET", "/healthz").status == 200);
  config.bind = "127.0.0.1";
  config.port = first.port();
  HttpServer second(config, view);
  try {
    second.start();
    BOOST_FAIL("a second server bound a port in use");
  } catch (const std::runtime_error& e) {
    BOOST_TEST(std::string(e.what()).find("cannot bind HTTP on 127.0.0.1:" + std::to_string(first.port())) !=
                   std::string::npos,
               e.what());
  }
  second.stop();  // never started: nothing to do
}

BOOST_FIXTURE_TEST_CASE(stop_closes_unfinished_heads_and_answers_requests_in_progress, Fixture) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> in_handler{false};
  view.ha_state = [&] {  // /healthz asks it on a worker thread: hold the request there
    in_handler = true;
    released.wait_for(10s);
    return std::string("standalone");
  };
  HttpServer http(HttpConfig{}, view);
  http.start();
  int slow = connect_to(http.port());
  BOOST_REQUIRE(slow >= 0);
  BOOST_REQUIRE(::send(slow, "GET /healthz HTTP/1.1\r\nHo", 25, MSG_NOSIGNAL) == 25);
  int busy = connect_to(http.port());
  BOOST_REQUIRE(busy >= 0);
  auto answer = std::async(std::launch::async, [&] { return send_and_read(busy, "GET /healthz HTTP/1.1\r\n\r\n"); });
  BOOST_REQUIRE(testing::wait_until([&] { return in_handler.load(); }, 5s));

  auto started = Clock::now();
  auto stopped = std::async(std::launch::async, [&] { http.stop(); });
  std::string cut = send_and_read(slow, "");  // the unfinished head: closed, unanswered
  BOOST_TEST(cut.empty(), cut);
  BOOST_TEST((Clock::now() - started < 1s));
  BOOST_TEST((stopped.wait_for(200ms) == std::future_status::timeout));  // still answering the other
  release.set_value();
  stopped.get();
  BOOST_TEST(answer.get().rfind("HTTP/1.1 200 OK", 0) == 0u);
  http.stop();  // idempotent
  BOOST_TEST(connect_to(http.port()) == -1);
}
