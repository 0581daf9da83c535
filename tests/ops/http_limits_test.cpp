// The HTTP side against careless and hostile clients (issue 52): a body
// larger than its endpoint takes is refused from its headers, before a byte
// of it is read and before the token is checked, so the server's memory
// does not grow; clients that send their headers a byte at a time, and idle
// connections, do not keep /healthz from answering.
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>
#include <vector>

#include "tests/ops/ops_support.h"

using namespace zstore::testing;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kToken = "t0ken-of-the-test";

// A TCP connection to 127.0.0.1:port whose reads give up after `timeout`.
class Conn {
 public:
  Conn(std::uint16_t port, std::chrono::milliseconds timeout) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~Conn() { ::close(fd_); }
  bool connected() const { return connected_; }
  bool send(const std::string& data) {
    return ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
  }
  // What arrives until the peer closes or a read times out.
  std::string read_all() {
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd_, buf, sizeof buf, 0)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    return out;
  }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

int status_of(const std::string& response) {
  if (response.rfind("HTTP/1.1 ", 0) != 0 || response.size() < 12) return 0;
  return std::stoi(response.substr(9, 3));
}

// GET path answered within timeout: its status, 0 if none came in time.
int get_within(std::uint16_t port, const std::string& path, std::chrono::milliseconds timeout) {
  Conn c(port, timeout);
  if (!c.connected() || !c.send("GET " + path + " HTTP/1.1\r\nHost: t\r\n\r\n")) return 0;
  return status_of(c.read_all());
}

long vm_rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

struct Fixture {
  TempDir dir;
  std::string token_file = [this] {
    auto path = (dir.path() / "token").string();
    std::ofstream(path) << kToken << "\n";
    return path;
  }();
  HttpZstored z{{"--http-token-file", token_file}};
  Fixture() { BOOST_REQUIRE_MESSAGE(z.server.start(), z.server.log()); }
  double http_auth_failures() {
    return metric(scrape_metrics_with_token(), "zstore_auth_failures_total{port=\"http\"}");
  }
  std::map<std::string, double> scrape_metrics_with_token() {
    HttpReply r = http_request(z.http_port, "GET", "/metrics", "", kToken);
    BOOST_REQUIRE_EQUAL(r.status, 200);
    return parse_prometheus(r.body);
  }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(a_large_body_is_refused_before_it_is_read, Fixture) {
  const std::string big = std::to_string(100u << 20);
  struct Case {
    std::string head;
    int status;
  };
  const std::vector<Case> cases = {
      {"POST /admin/checkpoint HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer wrong\r\nContent-Length: " + big, 413},
      {"POST /admin/checkpoint HTTP/1.1\r\nHost: t\r\nContent-Length: " + big, 413},
      {"GET /metrics HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " + std::string(kToken) + "\r\nContent-Length: " + big,
       413},
      {"POST /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: " + big, 405},  // a known path: the method decides
      {"POST /nope HTTP/1.1\r\nHost: t\r\nContent-Length: 10", 413},
      {"POST /admin/checkpoint HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked", 411},
      {"POST /admin/checkpoint HTTP/1.1\r\nHost: t", 411},
      {"POST /admin/checkpoint HTTP/1.1\r\nHost: t\r\nContent-Length: 12x", 400},
  };
  for (const auto& c : cases) {
    // The answer comes before a byte of the body is sent.
    Conn conn(z.http_port, 2s);
    BOOST_REQUIRE(conn.connected());
    BOOST_REQUIRE(conn.send(c.head + "\r\n\r\n"));
    BOOST_TEST(status_of(conn.read_all()) == c.status, c.head);
  }
  BOOST_TEST(http_auth_failures() == 0.0);  // refused before the token was looked at

  // And sending 100 MB anyway: the server closes, its memory stays put.
  pid_t pid = z.server.process()->pid();
  long before = vm_rss_kib(pid);
  for (int i = 0; i < 2; ++i) {
    Conn conn(z.http_port, 2s);
    BOOST_REQUIRE(conn.send("POST /admin/checkpoint HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " +
                            std::string(kToken) + "\r\nContent-Length: " + big + "\r\n\r\n"));
    std::string chunk(1 << 20, 'x');
    std::size_t sent = 0;
    while (sent < (100u << 20) && conn.send(chunk)) sent += chunk.size();
    BOOST_TEST_MESSAGE("sent " << sent << " bytes of the body before the server closed");
    BOOST_TEST(sent < (100u << 20));
  }
  long after = vm_rss_kib(pid);
  BOOST_TEST_MESSAGE("zstored VmRSS " << before << " KiB before, " << after << " KiB after");
  BOOST_TEST(after - before < 16 * 1024);
  BOOST_TEST(get_within(z.http_port, "/healthz", 2s) == 200);
  // A form the checkpoint endpoint takes still gets through to it.
  BOOST_TEST(http_request(z.http_port, "POST", "/admin/checkpoint", "dir=x", kToken).status == 403);  // no --backup-dir
}

BOOST_FIXTURE_TEST_CASE(slow_headers_and_idle_connections_do_not_block_healthz, Fixture) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> slow;
  for (int i = 0; i < 2; ++i) {
    slow.emplace_back([&] {  // slowloris: a header byte every 500 ms, under the server's 2 s read time-out
      Conn c(z.http_port, 2s);
      if (!c.send("GET /metrics HTTP/1.1\r\nHost: t\r\nX-Slow: ")) return;
      while (!stop && c.send("a")) std::this_thread::sleep_for(500ms);
    });
  }
  std::vector<std::unique_ptr<Conn>> idle;
  for (int i = 0; i < 20; ++i) idle.push_back(std::make_unique<Conn>(z.http_port, 2s));
  std::this_thread::sleep_for(1s);  // the slow ones hold their workers
  int answered = 0;
  for (int i = 0; i < 5; ++i) {
    auto started = Clock::now();
    int status = get_within(z.http_port, "/healthz", 2s);
    BOOST_TEST_MESSAGE("/healthz " << status << " in "
                                   << std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count()
                                   << " ms");
    answered += status == 200 ? 1 : 0;
    std::this_thread::sleep_for(300ms);
  }
  stop = true;
  for (auto& t : slow) t.join();
  BOOST_TEST(answered == 5);
}
