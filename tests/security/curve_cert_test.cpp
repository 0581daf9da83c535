// CURVE certificate files: our reader and writer against the format czmq
// and pyzmq use (pyzmq itself writes and reads the files here), and
// zstore-cli keygen's files, modes and refusals.
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "security/curve_cert.h"
#include "tests/support/test_support.h"

using zstore::security::CurveCert;
using zstore::testing::Process;
using zstore::testing::TempDir;
using namespace std::chrono_literals;

namespace {

// Debian's python3-zmq is installed for /usr/bin/python3 (tools/setup.sh).
constexpr const char* kPython = "/usr/bin/python3";

struct Run {
  int code = -1;
  std::string output;
};

Run run(const std::string& program, std::vector<std::string> args, const TempDir& dir, const std::string& tag) {
  Process p(program, std::move(args), dir.path() / (tag + ".log"));
  Run r;
  r.code = p.wait(20s);
  r.output = p.log();
  return r;
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const CurveCert kCert = zstore::security::generate_cert();

}  // namespace

BOOST_AUTO_TEST_CASE(generated_cert_round_trips_through_both_files) {
  BOOST_REQUIRE_EQUAL(kCert.public_key.size(), 40u);
  auto pub = zstore::security::parse_cert(zstore::security::format_public_cert(kCert));
  BOOST_REQUIRE_MESSAGE(pub.cert, pub.error);
  BOOST_TEST(pub.cert->public_key == kCert.public_key);
  BOOST_TEST(pub.cert->secret_key.empty());
  auto sec = zstore::security::parse_cert(zstore::security::format_secret_cert(kCert));
  BOOST_REQUIRE_MESSAGE(sec.cert, sec.error);
  BOOST_TEST(sec.cert->public_key == kCert.public_key);
  BOOST_TEST(sec.cert->secret_key == kCert.secret_key);
}

BOOST_AUTO_TEST_CASE(bad_certificates_are_refused_with_the_reason) {
  auto other = zstore::security::generate_cert();
  auto check = [](const std::string& text, const std::string& why) {
    auto r = zstore::security::parse_cert(text);
    BOOST_TEST(!r.cert);
    BOOST_TEST(contains(r.error, why), r.error);
  };
  check("metadata\ncurve\n", "no public-key");
  check("curve\n    public-key = \"short\"\n", "public-key is not");
  check("curve\n    public-key = \"" + kCert.public_key + "\"\n    secret-key = \"x\"\n", "secret-key is not");
  check("curve\n    public-key = \"" + kCert.public_key + "\"\n    secret-key = \"" + other.secret_key + "\"\n",
        "does not belong");
  // A key commented out does not count.
  check("#    public-key = \"" + kCert.public_key + "\"\n", "no public-key");
}

BOOST_AUTO_TEST_CASE(load_names_the_file_and_can_demand_the_secret) {
  TempDir dir;
  BOOST_REQUIRE_EQUAL(zstore::security::save_cert(kCert, dir.str(), "srv"), "");
  auto missing = zstore::security::load_cert(dir.str() + "/nope.key", false);
  BOOST_TEST(contains(missing.error, dir.str() + "/nope.key"));
  auto public_only = zstore::security::load_cert(dir.str() + "/srv.key", true);
  BOOST_TEST(!public_only.cert);
  BOOST_TEST(contains(public_only.error, "no secret-key"));
  BOOST_TEST(zstore::security::load_cert(dir.str() + "/srv.key", false).cert.has_value());
  BOOST_TEST(zstore::security::load_cert(dir.str() + "/srv.key_secret", true).cert.has_value());
}

BOOST_AUTO_TEST_CASE(reads_certificates_pyzmq_wrote) {
  TempDir dir;
  auto r = run(kPython,
               {"-c",
                "import sys, zmq.auth; d = sys.argv[1]; zmq.auth.create_certificates(d, 'alice'); "
                "p, s = zmq.auth.load_certificate(d + '/alice.key_secret'); print('KEYS', p.decode(), s.decode())",
                dir.str()},
               dir, "py");
  BOOST_REQUIRE_MESSAGE(r.code == 0, "pyzmq (apt-get install python3-zmq) failed: " << r.output);
  auto at = r.output.find("KEYS ");
  BOOST_REQUIRE(at != std::string::npos);
  std::string pub = r.output.substr(at + 5, 40), sec = r.output.substr(at + 46, 40);
  auto ours = zstore::security::load_cert(dir.str() + "/alice.key_secret", true);
  BOOST_REQUIRE_MESSAGE(ours.cert, ours.error);
  BOOST_TEST(ours.cert->public_key == pub);
  BOOST_TEST(ours.cert->secret_key == sec);
  auto pub_only = zstore::security::load_cert(dir.str() + "/alice.key", false);
  BOOST_REQUIRE_MESSAGE(pub_only.cert, pub_only.error);
  BOOST_TEST(pub_only.cert->public_key == pub);
}

BOOST_AUTO_TEST_CASE(keygen_writes_files_pyzmq_loads) {
  TempDir dir;
  auto r = run(zstore::testing::bin_path("zstore-cli"), {"keygen", "bob", "--dir", dir.str()}, dir, "keygen");
  BOOST_REQUIRE_MESSAGE(r.code == 0, r.output);
  auto ours = zstore::security::load_cert(dir.str() + "/bob.key_secret", true);
  BOOST_REQUIRE_MESSAGE(ours.cert, ours.error);
  BOOST_TEST(contains(r.output, ours.cert->public_key));  // printed
  struct stat st {};
  BOOST_REQUIRE_EQUAL(::stat((dir.path() / "bob.key_secret").c_str(), &st), 0);
  BOOST_TEST((st.st_mode & 0777) == 0600u);
  BOOST_TEST(!contains(read(dir.path() / "bob.key"), "secret-key"));

  auto py =
      run(kPython,
          {"-c",
           "import sys, zmq.auth; d = sys.argv[1]; p, s = zmq.auth.load_certificate(d + '/bob.key_secret'); "
           "q, n = zmq.auth.load_certificate(d + '/bob.key'); print('KEYS', p.decode(), s.decode(), q.decode(), n)",
           dir.str()},
          dir, "pyload");
  BOOST_REQUIRE_MESSAGE(py.code == 0, py.output);
  BOOST_TEST(contains(py.output, "KEYS " + ours.cert->public_key + " " + ours.cert->secret_key + " " +
                                     ours.cert->public_key + " None"),
             py.output);
}

BOOST_AUTO_TEST_CASE(keygen_refuses_to_overwrite_and_bad_names) {
  TempDir dir;
  auto cli = zstore::testing::bin_path("zstore-cli");
  BOOST_REQUIRE_EQUAL(run(cli, {"keygen", "carol", "--dir", dir.str()}, dir, "k1").code, 0);
  auto before = read(dir.path() / "carol.key_secret");
  auto again = run(cli, {"keygen", "carol", "--dir", dir.str()}, dir, "k2");
  BOOST_TEST(again.code == 1);
  BOOST_TEST(contains(again.output, "exists"), again.output);
  BOOST_TEST(read(dir.path() / "carol.key_secret") == before);
  for (std::string bad : {"../x", ".hidden", "a b", ""}) {
    auto r = run(cli, {"keygen", bad, "--dir", dir.str()}, dir, "bad");
    BOOST_TEST(r.code == 2, bad << ": " << r.output);
  }
  BOOST_TEST(run(cli, {"keygen", "--dir", dir.str()}, dir, "none").code == 2);
}
