// BenchCurve: CURVE keys for a zstored that zstore-bench starts itself, made
// with the project's keygen code (security/curve_cert.h) in a temporary
// directory removed on destruction: a server certificate and one client,
// "bench", whose public certificate is the only one in the allow directory.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "security/curve_socket.h"

namespace zstore::bench {

class BenchCurve {
 public:
  // Throws std::runtime_error when the keys cannot be written.
  BenchCurve();
  ~BenchCurve();
  BenchCurve(const BenchCurve&) = delete;
  BenchCurve& operator=(const BenchCurve&) = delete;

  // zstored's flags: --curve-cert DIR/server.key_secret --curve-allow DIR/allow.
  std::vector<std::string> server_args() const;
  // What the benchmark's clients connect with: "bench"'s keys and the server's.
  const security::SocketSecurity& client() const { return client_; }

 private:
  std::filesystem::path dir_;
  security::SocketSecurity client_;
};

}  // namespace zstore::bench
