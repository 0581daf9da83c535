#include "tools/harness/harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace zstore::testing {
namespace {

// Binds a TCP socket to 127.0.0.1:port (0: a free port the kernel picks)
// and returns its fd, or -1 when anything else holds the port. The bind is
// exclusive (no SO_REUSEADDR yet), so it fails on a port another test holds,
// listens on or has connections on. SO_REUSEADDR is set only afterwards:
// Linux then lets a server that sets it too (libzmq, our HTTP server) bind
// and listen on the port while we keep holding it, and meanwhile gives the
// port to no bind(0) and no outgoing connection.
int hold(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int yes = 1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The port an fd is bound to.
std::uint16_t bound_port(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) throw std::runtime_error("getsockname failed");
  return ntohs(addr.sin_port);
}

// Children started by Process and not yet reaped, so that a test ended early
// (a sanitizer report of one child) does not leave the others running.
std::mutex children_mutex;
std::set<pid_t> children;

void kill_all_children() {
  std::lock_guard<std::mutex> lock(children_mutex);
  for (pid_t pid : children) ::kill(pid, SIGKILL);
}

}  // namespace

std::uint16_t free_port_range(int count) {
  // The sockets holding every range handed out, open until the process ends.
  static std::mutex held_mutex;
  static std::vector<int> held;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    std::vector<int> fds{hold(0)};
    if (fds[0] < 0) throw std::runtime_error("cannot bind a loopback port");
    std::uint16_t base = bound_port(fds[0]);
    while (static_cast<int>(fds.size()) < count && base + fds.size() <= 65535) {
      int fd = hold(static_cast<std::uint16_t>(base + fds.size()));
      if (fd < 0) break;
      fds.push_back(fd);
    }
    if (static_cast<int>(fds.size()) == count) {
      std::lock_guard<std::mutex> lock(held_mutex);
      held.insert(held.end(), fds.begin(), fds.end());
      return base;
    }
    for (int fd : fds) ::close(fd);
  }
  throw std::runtime_error("no free loopback port range found");
}

TempDir::TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/zstore-test-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

int time_scale() {
  static const int scale = [] {
    const char* env = std::getenv("ZSTORE_TEST_TIME_SCALE");
    return env != nullptr && std::atoi(env) > 0 ? std::atoi(env) : ZSTORE_TEST_TIME_SCALE;
  }();
  return scale;
}

bool wait_until(const std::function<bool()>& cond, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + scaled(timeout);
  while (true) {
    if (cond()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string bin_path(const std::string& name) {
  const char* dir = std::getenv("ZSTORE_BIN_DIR");
  return std::string(dir != nullptr && *dir != '\0' ? dir : ZSTORE_DEFAULT_BIN_DIR) + "/" + name;
}

Process::Process(const std::string& program, std::vector<std::string> args, const std::filesystem::path& log_file,
                 std::optional<Credentials> run_as)
    : log_file_(log_file) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    // A test killed from outside (a ctest time-out, Ctrl-C) must not leave
    // its zstoreds running. The signal comes when the forking thread ends:
    // every test starts its children from its main thread.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the test died before prctl
    int fd = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
    if (run_as && (::setgroups(0, nullptr) != 0 || ::setgid(run_as->gid) != 0 || ::setuid(run_as->uid) != 0)) {
      std::perror("cannot take the requested uid/gid");
      ::_exit(126);
    }
    ::execv(program.c_str(), argv.data());
    ::_exit(127);
  }
  std::lock_guard<std::mutex> lock(children_mutex);
  children.insert(pid_);
}

Process::~Process() {
  if (running()) {
    ::kill(pid_, SIGKILL);
    wait(std::chrono::seconds(10));
  }
  // A sanitizer report of the child (TSan keeps running after one; a killed
  // child never reaches its non-zero exit) fails the test that started it.
  std::string text = log();
  for (const char* mark : {"WARNING: ThreadSanitizer:", "ERROR: AddressSanitizer:"}) {
    if (auto at = text.find(mark); at != std::string::npos) {
      std::fprintf(stderr, "sanitizer report in the log of child %d (%s):\n%s\n", static_cast<int>(pid_),
                   log_file_.c_str(), text.substr(at > 2000 ? at - 2000 : 0, 30000).c_str());
      std::fflush(stderr);
      kill_all_children();
      std::_Exit(66);  // as TSan exits; not abort(): Boost.Test's SIGABRT handler is not signal-safe
    }
  }
}

bool Process::running() {
  if (exited_) return false;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exited_ = true;
    status_ = status;
    std::lock_guard<std::mutex> lock(children_mutex);
    children.erase(pid_);
    return false;
  }
  return r == 0;
}

void Process::kill(int signal) {
  if (!exited_) ::kill(pid_, signal);
}

int Process::wait(std::chrono::milliseconds timeout) {
  if (!wait_until([this] { return !running(); }, timeout)) return -1;
  if (WIFEXITED(status_)) return WEXITSTATUS(status_);
  if (WIFSIGNALED(status_)) return 128 + WTERMSIG(status_);
  return -1;
}

std::string Process::log() const {
  std::ifstream in(log_file_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace zstore::testing
