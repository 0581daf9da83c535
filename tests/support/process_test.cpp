// testing::Process: a child dies with the test that started it, even when
// the test is SIGKILLed (a ctest time-out) and never runs its destructors;
// its output is logged; it can run as another user.
#include <signal.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <fstream>
#include <string>

#include "tests/support/test_support.h"

using zstore::testing::Process;
using zstore::testing::TempDir;
using zstore::testing::wait_until;

namespace {

// Whether pid is a live process (a zombie waiting for its reaper is not).
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_child_is_killed_when_its_test_process_is_killed) {
  TempDir dir;
  // Orphans are handed to this process (not to init), which reaps them.
  BOOST_REQUIRE_EQUAL(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int fds[2];
  BOOST_REQUIRE_EQUAL(::pipe(fds), 0);
  pid_t test = ::fork();  // stands for a test process
  BOOST_REQUIRE_GE(test, 0);
  if (test == 0) {
    ::close(fds[0]);
    Process child("/bin/sleep", {"600"}, dir.path() / "sleep.log");
    pid_t pid = child.pid();
    (void)!::write(fds[1], &pid, sizeof pid);
    ::pause();  // until SIGKILL: no destructor runs
    ::_exit(0);
  }
  ::close(fds[1]);
  pid_t child = -1;
  BOOST_REQUIRE_EQUAL(::read(fds[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
  ::close(fds[0]);
  BOOST_REQUIRE(alive(child));
  ::kill(test, SIGKILL);
  ::waitpid(test, nullptr, 0);
  bool died = wait_until([&] { return !alive(child); }, std::chrono::seconds(10));
  if (!died) ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  BOOST_CHECK(died);
}

BOOST_AUTO_TEST_CASE(a_child_runs_to_its_own_exit_with_its_output_logged) {
  TempDir dir;
  Process child("/bin/sh", {"-c", "echo ready; exit 3"}, dir.path() / "sh.log");
  BOOST_CHECK_EQUAL(child.wait(), 3);
  BOOST_CHECK_EQUAL(child.log(), "ready\n");
}

BOOST_AUTO_TEST_CASE(a_child_runs_as_the_user_it_is_given) {
  TempDir dir;
  const passwd* nobody = ::getpwnam("nobody");
  BOOST_REQUIRE(nobody != nullptr);
  zstore::testing::Credentials as{nobody->pw_uid, nobody->pw_gid};
  Process child("/usr/bin/id", {"-u"}, dir.path() / "id.log", as);
  if (::geteuid() == 0) {
    BOOST_CHECK_EQUAL(child.wait(), 0);
    BOOST_CHECK_EQUAL(child.log(), std::to_string(nobody->pw_uid) + "\n");
  } else {  // only root may change its uid: the child says so and exits 126
    BOOST_CHECK_EQUAL(child.wait(), 126);
  }
}
