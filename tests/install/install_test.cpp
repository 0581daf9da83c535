// cmake --install of the "development" component into a temporary prefix,
// then a program outside the tree (tests/install/outside) configured and
// built against it with find_package(zstore) and with pkg-config, run
// against a real zstored (CHP on free ports, embedded Dafka tower and store).
#include <signal.h>

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/zstored.h"

namespace fs = std::filesystem;
using zstore::testing::Process;
using zstore::testing::TempDir;
using zstore::testing::Zstored;

namespace {

// Runs argv to completion (bounded); returns the exit code, output in *log.
int run(const std::vector<std::string>& argv, std::string* log, std::chrono::seconds timeout) {
  TempDir logs;
  Process p(argv[0], std::vector<std::string>(argv.begin() + 1, argv.end()), logs.path() / "out.log");
  int rc = p.wait(timeout);
  if (rc == -1) {
    p.kill(SIGKILL);
    p.wait();
  }
  *log += p.log();
  return rc;
}

const std::string kCmake = ZSTORE_CMAKE_COMMAND;

}  // namespace

BOOST_AUTO_TEST_CASE(outside_project_builds_against_the_install_and_talks_to_zstored) {
  TempDir prefix, work;
  std::string log;
  BOOST_REQUIRE_MESSAGE(
      run({kCmake, "--install", ZSTORE_BUILD_DIR, "--prefix", prefix.str(), "--component", "development"}, &log,
          std::chrono::seconds(60)) == 0,
      log);
  // The public headers and both kinds of package description are in place;
  // server internals are not.
  const std::string lib = ZSTORE_INSTALL_LIBDIR;  // lib/<multiarch> on Debian
  for (const std::string& f :
       std::vector<std::string>{"include/zstore/client/clone_client.h", "include/zstore/client/dafka_producer.h",
                                "include/zstore/client/dafka_consumer.h", lib + "/cmake/zstore/zstoreConfig.cmake",
                                lib + "/pkgconfig/zstore-client.pc", lib + "/pkgconfig/zstore-dafka-client.pc",
                                lib + "/libzstore_client.a", lib + "/libzstore_dafka_client.a"}) {
    BOOST_CHECK_MESSAGE(fs::exists(prefix.path() / f), "installed " << f);
  }
  BOOST_CHECK(!fs::exists(prefix.path() / "include/zstore/server"));
  BOOST_CHECK(!fs::exists(prefix.path() / "bin"));

  log.clear();
  std::string build = (work.path() / "build").string();
  std::vector<std::string> configure = {kCmake,
                                        "-S",
                                        ZSTORE_OUTSIDE_SOURCE_DIR,
                                        "-B",
                                        build,
                                        "-DCMAKE_BUILD_TYPE=Release",
                                        "-DCMAKE_PREFIX_PATH=" + prefix.str(),
                                        "-DZSTORE_PKG_CONFIG_DIR=" + (prefix.path() / lib / "pkgconfig").string()};
  const std::string sanitizer_flags = ZSTORE_OUTSIDE_FLAGS;  // the flags our libraries were built with
  if (!sanitizer_flags.empty()) {
    configure.push_back("-DCMAKE_CXX_FLAGS=" + sanitizer_flags);
    configure.push_back("-DCMAKE_EXE_LINKER_FLAGS=" + sanitizer_flags);
  }
  BOOST_REQUIRE_MESSAGE(run(configure, &log, std::chrono::seconds(120)) == 0, log);
  log.clear();
  BOOST_REQUIRE_MESSAGE(run({kCmake, "--build", build, "-j", "2"}, &log, std::chrono::seconds(240)) == 0, log);

  std::uint16_t tower_port = zstore::testing::free_port_range(3);
  Zstored zstored{{"--tower-port", std::to_string(tower_port), "--dafka-port", std::to_string(tower_port + 2)}};
  BOOST_REQUIRE_MESSAGE(zstored.start(), zstored.log());
  std::string tower = "tcp://127.0.0.1:" + std::to_string(tower_port);
  for (const char* program : {"outside_cmake", "outside_pkgconfig"}) {
    log.clear();
    int rc = run({build + "/" + program, zstored.chp_endpoint(), tower}, &log, std::chrono::seconds(90));
    BOOST_CHECK_MESSAGE(rc == 0, program << " exited " << rc << ": " << log);
    BOOST_CHECK_MESSAGE(log.find("outside: ok") != std::string::npos, program << ": " << log);
  }
}
