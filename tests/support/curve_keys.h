// Test keys for zstored with CURVE: a server key pair and client key pairs
// saved as certificate files in a temp dir, and an allow directory holding
// the public certificates of the clients allowed in.
#pragma once

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "security/curve_cert.h"
#include "security/curve_socket.h"
#include "tests/support/test_support.h"

namespace zstore::testing {

struct CurveKeys {
  TempDir dir;
  security::CurveCert server = security::generate_cert();
  std::map<std::string, security::CurveCert> clients;

  // names: the clients; allowed: those whose NAME.key goes into the allow dir.
  CurveKeys(const std::vector<std::string>& names, const std::vector<std::string>& allowed) {
    std::filesystem::create_directories(allow_dir());
    BOOST_REQUIRE_EQUAL(security::save_cert(server, dir.str(), "server"), "");
    for (const auto& n : names) {
      clients[n] = security::generate_cert();
      BOOST_REQUIRE_EQUAL(security::save_cert(clients[n], dir.str(), n), "");
    }
    for (const auto& n : allowed) allow(n);
  }
  void allow(const std::string& name) {
    std::filesystem::copy_file(dir.path() / (name + ".key"), allow_dir() / (name + ".key"));
  }
  void forbid(const std::string& name) { std::filesystem::remove(allow_dir() / (name + ".key")); }
  std::filesystem::path allow_dir() const { return dir.path() / "allow"; }
  std::string file(const std::string& name) const { return (dir.path() / name).string(); }
  // zstored flags: our server certificate and allow dir, HUGZ every 100 ms.
  std::vector<std::string> server_args() const {
    return {"--curve-cert",       file("server.key_secret"), "--curve-allow",
            allow_dir().string(), "--hugz-interval-ms",      "100"};
  }
  security::SocketSecurity as(const std::string& name) const { return {clients.at(name), server.public_key}; }
};

}  // namespace zstore::testing
