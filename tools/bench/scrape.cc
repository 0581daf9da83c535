#include "tools/bench/scrape.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>

namespace zstore::bench {
namespace {

struct Fd {
  int fd;
  ~Fd() { ::close(fd); }
};

// The whole reply (the server closes the connection after it).
std::string exchange(const std::string& host, std::uint16_t port, const std::string& request) {
  Fd s{::socket(AF_INET, SOCK_STREAM, 0)};
  if (s.fd < 0) throw std::runtime_error("metrics scrape: socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1)
    throw std::runtime_error("metrics scrape: bad host " + host);
  if (::connect(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    throw std::runtime_error("metrics scrape: cannot connect to " + host + ":" + std::to_string(port));
  }
  if (::send(s.fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    throw std::runtime_error("metrics scrape: send failed");
  }
  std::string reply;
  char buf[65536];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{s.fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    ssize_t n = ::recv(s.fd, buf, sizeof buf, 0);
    if (n <= 0) return reply;
    reply.append(buf, static_cast<std::size_t>(n));
  }
  throw std::runtime_error("metrics scrape: no complete reply within 30 s");
}

double sample_of(const std::string& body, const std::string& name) {
  auto at = body.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(body.substr(at + name.size() + 2));
}

}  // namespace

std::string http_get(const std::string& host, std::uint16_t port, const std::string& path) {
  return exchange(host, port, "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n");
}

double chp_turn_age_ms(const std::string& reply) {
  auto chp = reply.find("\"chp\"");
  if (chp == std::string::npos) return -1;
  const std::string field = "\"last_turn_ms_ago\":";
  auto at = reply.find(field, chp);
  auto end = reply.find('}', chp);
  if (at == std::string::npos || at > end) return -1;
  return std::stod(reply.substr(at + field.size()));
}

ScrapeTiming time_metrics_scrape(const std::string& host, std::uint16_t port) {
  auto start = std::chrono::steady_clock::now();
  std::string reply = http_get(host, port, "/metrics");
  ScrapeTiming t;
  t.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (reply.rfind("HTTP/1.1 200", 0) != 0 && reply.rfind("HTTP/1.0 200", 0) != 0) {
    throw std::runtime_error("metrics scrape: " + reply.substr(0, reply.find('\r')));
  }
  t.chp_keys = sample_of(reply, "zstore_chp_keys");
  return t;
}

}  // namespace zstore::bench
