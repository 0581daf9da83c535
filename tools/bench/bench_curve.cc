#include "tools/bench/bench_curve.h"

#include <cstdlib>
#include <stdexcept>

#include "security/curve_cert.h"

namespace zstore::bench {

namespace {

std::filesystem::path make_key_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/zstore-bench-keys.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot create a temporary directory for keys");
  return pattern;
}

void save(const security::CurveCert& cert, const std::filesystem::path& dir, const std::string& name) {
  if (auto err = security::save_cert(cert, dir.string(), name); !err.empty()) throw std::runtime_error(err);
}

}  // namespace

BenchCurve::BenchCurve() : dir_(make_key_dir()) {
  security::CurveCert server = security::generate_cert();
  security::CurveCert bench = security::generate_cert();
  std::filesystem::create_directory(dir_ / "allow");
  save(server, dir_, "server");
  save(bench, dir_ / "allow", "bench");
  std::filesystem::remove(dir_ / "allow" / "bench.key_secret");  // the allow list holds public keys only
  client_.cert = bench;
  client_.server_key = server.public_key;
}

BenchCurve::~BenchCurve() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::vector<std::string> BenchCurve::server_args() const {
  return {"--curve-cert", (dir_ / "server.key_secret").string(), "--curve-allow", (dir_ / "allow").string()};
}

}  // namespace zstore::bench
