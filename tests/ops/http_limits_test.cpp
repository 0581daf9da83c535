// The HTTP side against careless and hostile clients (issue 52): a body
// larger than its endpoint takes is refused from its headers, before a byte
// of it is read and before the token is checked, so the server's memory
// does not grow; clients that send their headers a byte at a time are
// closed by the head deadline, and a flood of idle connections past the cap
// is evicted, so neither keeps /healthz from answering.
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
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
      {"GET /metrics HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " + std::string(kToken) +
           "\r\nContent-Length: " + big,
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

namespace {

// One GET /healthz: its status and how long its answer took (0: none within 2 s).
std::pair<int, long> timed_healthz(std::uint16_t port) {
  auto started = Clock::now();
  int status = get_within(port, "/healthz", scaled(2000ms));
  long ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
  BOOST_TEST_MESSAGE("/healthz " << status << " in " << ms << " ms");
  return {status, ms};
}

int open_fds(pid_t pid) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd"))
    ++n;
  return n;
}

}  // namespace

// Slowloris, more connections than the old server's 32 worker threads: each
// sends a header byte every 300 ms. /healthz answers meanwhile, and the head
// deadline (2 s from accept) closes the slow ones.
BOOST_FIXTURE_TEST_CASE(slow_headers_do_not_block_healthz_and_are_closed_by_the_head_deadline, Fixture) {
  constexpr int kSlow = 48;  // below the cap (64): none is evicted, the deadline closes each
  std::vector<std::unique_ptr<Conn>> slow;
  for (int i = 0; i < kSlow; ++i) {
    auto c = std::make_unique<Conn>(z.http_port, 500ms);
    if (c->connected() && c->send("GET /metrics HTTP/1.1\r\nHost: t\r\nX-Slow: ")) slow.push_back(std::move(c));
  }
  BOOST_TEST(slow.size() == std::size_t(kSlow));  // all in: the kernel's backlog, then the server, took them
  auto opened = Clock::now();
  std::atomic<bool> stop{false};
  std::atomic<int> closed{0};
  std::thread drip([&] {  // a byte per connection every 300 ms, until the server closes it
    std::vector<bool> gone(slow.size(), false);
    while (!stop && Clock::now() - opened < scaled(10s)) {
      for (std::size_t i = 0; i < slow.size(); ++i) {
        if (!gone[i] && !slow[i]->send("a")) {
          gone[i] = true;
          ++closed;
        }
      }
      std::this_thread::sleep_for(300ms);  // the drip's pace is the subject
    }
  });
  int answered = 0;
  for (int i = 0; i < 10; ++i) {
    auto [status, ms] = timed_healthz(z.http_port);
    answered += status == 200 ? 1 : 0;
    std::this_thread::sleep_for(50ms);  // spreads the /healthz requests over the drip, not a wait
  }
  BOOST_TEST(answered == 10);
  BOOST_TEST(wait_until([&] { return closed.load() == int(slow.size()); }, 6s),
             closed.load() << " of " << slow.size() << " closed");
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - opened).count();
  BOOST_TEST_MESSAGE("the slow connections were closed within " << took << " ms of opening");
  stop = true;
  drip.join();
  BOOST_TEST(metric(scrape_metrics_with_token(), "zstore_http_timeouts_total") >= double(slow.size()));
}

// More idle connections than the cap (64 by default), opened and held,
// some with a head whose body never comes: each new one evicts the oldest
// that has not sent its whole request, so /healthz still gets in and is
// answered; once they are gone, the server's fds are back.
BOOST_FIXTURE_TEST_CASE(an_idle_flood_past_the_cap_does_not_keep_healthz_out, Fixture) {
  constexpr int kIdle = 500;
  pid_t pid = z.server.process()->pid();
  int fds_before = open_fds(pid);
  std::vector<std::unique_ptr<Conn>> idle;
  // The first 300 send a whole head whose body never comes, the rest nothing.
  const std::string head = "POST /admin/checkpoint HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " +
                           std::string(kToken) +
                           "\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                           "Content-Length: 100\r\n\r\n";
  for (int i = 0; i < kIdle; ++i) {  // quickly: a connect the kernel does not take at once is given up
    auto c = std::make_unique<Conn>(z.http_port, 50ms);
    if (c->connected() && (i >= 300 || c->send(head))) idle.push_back(std::move(c));
    // Time for the server to read those heads (well within the 2 s body
    // deadline), so that what it may evict next is only bodies it awaits: a
    // grace period, not a wait (no metric shows a head read).
    if (i == 299) std::this_thread::sleep_for(300ms);
  }
  BOOST_TEST(idle.size() == std::size_t(kIdle));
  int answered = 0;
  for (int i = 0; i < 10; ++i) answered += timed_healthz(z.http_port).first == 200 ? 1 : 0;
  BOOST_TEST(answered == 10);
  auto m = scrape_metrics_with_token();
  BOOST_TEST(metric(m, "zstore_http_max_connections") == 64.0);
  BOOST_TEST(metric(m, "zstore_http_connections_evicted_total") >= double(kIdle - 64));
  BOOST_TEST(metric(m, "zstore_http_connections") <= 64.0);
  BOOST_TEST(open_fds(pid) <= fds_before + 64 + 4);
  BOOST_TEST_MESSAGE("evicted " << metric(m, "zstore_http_connections_evicted_total") << ", zstored fds " << fds_before
                                << " before, " << open_fds(pid) << " with the flood held");
  idle.clear();
  BOOST_TEST(wait_until([&] { return open_fds(pid) <= fds_before + 1; }, 5s), open_fds(pid) << " fds");
  BOOST_TEST(wait_until([&] { return metric(scrape_metrics_with_token(), "zstore_http_connections") <= 1.0; }, 5s));
}

// A 100 MB Content-Length, with and without the token: 413 arrives while the
// client has sent only the head (it never sends the body), and zstored's
// memory does not grow.
BOOST_FIXTURE_TEST_CASE(a_huge_content_length_is_answered_413_from_the_head_alone, Fixture) {
  pid_t pid = z.server.process()->pid();
  long before = vm_rss_kib(pid);
  const std::string head =
      "POST /admin/checkpoint HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(100u << 20) + "\r\n";
  for (const std::string& auth : {std::string(), "Authorization: Bearer " + std::string(kToken) + "\r\n",
                                  std::string("Authorization: Bearer wrong\r\n")}) {
    for (int i = 0; i < 20; ++i) {
      Conn conn(z.http_port, scaled(2000ms));
      BOOST_REQUIRE(conn.connected());
      BOOST_REQUIRE(conn.send(head + auth + "\r\n"));
      std::string answer = conn.read_all();  // the server answers and closes; no body byte was sent
      BOOST_TEST(status_of(answer) == 413, auth << answer);
      BOOST_TEST(answer.find("takes at most 4096") != std::string::npos, answer);
    }
  }
  long after = vm_rss_kib(pid);
  BOOST_TEST_MESSAGE("zstored VmRSS " << before << " KiB before, " << after << " KiB after 60 refusals");
  BOOST_TEST(after - before < 4 * 1024);
  BOOST_TEST(http_auth_failures() == 0.0);  // refused before the token was looked at
}
