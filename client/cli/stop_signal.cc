#include "client/cli/stop_signal.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

namespace zstore::cli {
namespace {

volatile sig_atomic_t g_write_fd = -1;
volatile sig_atomic_t g_signal = 0;

void on_signal(int signo) {
  g_signal = signo;
  const int saved = errno;
  const char byte = 1;
  if (g_write_fd >= 0) (void)!::write(g_write_fd, &byte, 1);
  errno = saved;
}

void install(void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  for (int signo : {SIGINT, SIGTERM}) ::sigaction(signo, &sa, nullptr);
}

}  // namespace

StopSignal::StopSignal() {
  if (::pipe2(fds_, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error("pipe2 failed");
  g_signal = 0;
  g_write_fd = fds_[1];
  install(on_signal);
}

StopSignal::~StopSignal() {
  install(SIG_DFL);
  g_write_fd = -1;
  ::close(fds_[0]);
  ::close(fds_[1]);
}

void StopSignal::trigger() {
  const char byte = 1;
  (void)!::write(fds_[1], &byte, 1);
}

void StopSignal::wait() {
  pollfd p{fds_[0], POLLIN, 0};
  while (::poll(&p, 1, -1) < 0 && errno == EINTR) {
  }
}

int StopSignal::signal_number() const { return g_signal; }

}  // namespace zstore::cli
