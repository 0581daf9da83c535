#include "tools/bench/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <thread>

#include <zmq.hpp>

#include "protocol/chp_codec.h"
#include "tools/bench/load.h"
#include "tools/bench/system.h"
#include "tools/harness/harness.h"

namespace zstore::bench {

namespace chp = protocol::chp;

namespace {

std::filesystem::path make_temp_root() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/zstore-bench.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot create a temporary directory");
  return pattern;
}

// Waits up to `timeout` for the child to exit; its status, or -1 if it runs.
int wait_for_exit(pid_t pid, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int status = 0;
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0 || std::chrono::steady_clock::now() >= deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

bool wait_chp_ready(const ServerPorts& ports, std::chrono::milliseconds timeout, const std::function<bool()>& alive) {
  zmq::context_t context(1);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline && (!alive || alive())) {
    zmq::socket_t dealer(context, zmq::socket_type::dealer);
    dealer.set(zmq::sockopt::linger, 0);
    ports.security.as_client(dealer);
    dealer.connect(ports.endpoint(ports.chp));
    // A subtree no benchmark key has: the answer is just KTHXBAI.
    send_frames(dealer, chp::encode_icanhaz({"\x01ready?", std::nullopt}));
    zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, std::chrono::milliseconds(200)) > 0) return true;
  }
  return false;
}

double time_first_kthxbai(const ServerPorts& ports, std::chrono::milliseconds timeout,
                          const std::function<bool()>& alive) {
  auto start = std::chrono::steady_clock::now();
  zmq::context_t context(1);
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::reconnect_ivl, 1);
  ports.security.as_client(dealer);
  dealer.connect(ports.endpoint(ports.chp));
  send_frames(dealer, chp::encode_icanhaz({"\x01ready?", std::nullopt}));  // queued until connected
  zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
  while (std::chrono::steady_clock::now() - start < timeout && alive()) {
    if (zmq::poll(&item, 1, std::chrono::milliseconds(1)) > 0) {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  }
  return -1;
}

ServerProcess::ServerProcess(std::filesystem::path zstored, int cpu, std::vector<std::string> extra)
    : zstored_(std::move(zstored)), cpu_(cpu), extra_(std::move(extra)), root_(make_temp_root()) {
  std::uint16_t base = testing::free_port_range(7);  // reserved until zstore-bench exits
  ports_.chp = base;
  ports_.dafka = static_cast<std::uint16_t>(base + 3);
  ports_.tower = static_cast<std::uint16_t>(base + 4);
  ports_.http = static_cast<std::uint16_t>(base + 6);
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) stop();
  std::error_code ignored;
  std::filesystem::remove_all(root_, ignored);
}

void ServerProcess::launch() {
  std::vector<std::string> args = {zstored_.string(),
                                   "--data-dir",
                                   data_dir().string(),
                                   "--chp-port",
                                   std::to_string(ports_.chp),
                                   "--dafka-port",
                                   std::to_string(ports_.dafka),
                                   "--tower-port",
                                   std::to_string(ports_.tower),
                                   "--http-port",
                                   std::to_string(ports_.http),
                                   "--log-level",
                                   log_level_};
  args.insert(args.end(), extra_.begin(), extra_.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::string log = (root_ / "zstored.log").string();
  pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    // zstored dies with zstore-bench (started from its main thread), even
    // when the bench is killed.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    try {
      pin_current_thread(cpu_);
    } catch (const std::exception&) {
      ::_exit(126);
    }
    ::execv(argv[0], argv.data());
    ::dprintf(2, "cannot execute %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
}

void ServerProcess::kill_hard() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  (void)wait_for_exit(pid_, std::chrono::seconds(30));
  pid_ = -1;
}

bool ServerProcess::running() {
  if (pid_ <= 0) return false;
  if (wait_for_exit(pid_, std::chrono::milliseconds(0)) == -1) return true;
  pid_ = -1;
  return false;
}

void ServerProcess::start() {
  launch();
  int status = -1;
  auto alive = [&] { return (status = wait_for_exit(pid_, std::chrono::milliseconds(0))) == -1; };
  if (!wait_chp_ready(ports_, std::chrono::seconds(30), alive)) {
    if (status == -1) {
      stop();
    } else {
      pid_ = -1;  // already reaped
    }
    throw std::runtime_error("zstored (" + zstored_.string() + ") did not start (log " +
                             (root_ / "zstored.log").string() + "): " + log_text().substr(0, 2000));
  }
}

int ServerProcess::stop() {
  if (pid_ <= 0) return 0;
  ::kill(pid_, SIGTERM);
  int status = wait_for_exit(pid_, std::chrono::seconds(30));
  if (status == -1) {
    ::kill(pid_, SIGKILL);
    status = wait_for_exit(pid_, std::chrono::seconds(5));
  }
  pid_ = -1;
  return status;
}

std::string ServerProcess::log_text() const {
  std::ifstream in(root_ / "zstored.log");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::filesystem::path default_zstored_path() {
  std::error_code error;
  auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return "zstored";
  return self.parent_path() / "zstored";
}

}  // namespace zstore::bench
