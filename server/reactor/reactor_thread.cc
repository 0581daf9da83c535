#include "server/reactor/reactor_thread.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

namespace zstore::server {

ReactorThread::ReactorThread(std::atomic<std::int64_t>& heartbeat_ms, std::atomic<std::uint64_t>* turns)
    : heartbeat_ms_(heartbeat_ms), turns_(turns) {}

ReactorThread::~ReactorThread() { stop(); }

void ReactorThread::start(std::function<void()> body) {
  int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "reactor stop signal (eventfd)");
  stop_fd_ = fd;
  heartbeat_ms_ = loop_clock_ms();  // started: healthy until it misses a turn
  try {
    thread_ = std::thread(std::move(body));
  } catch (...) {
    ::close(stop_fd_);
    stop_fd_ = -1;
    throw;
  }
}

bool ReactorThread::stop() {
  if (!thread_.joinable()) return false;
  std::uint64_t one = 1;
  // Cannot fail: the counter is far from its maximum, and EINTR does not
  // apply to a non-blocking eventfd write.
  (void)!::write(stop_fd_, &one, sizeof one);
  thread_.join();
  ::close(stop_fd_);
  stop_fd_ = -1;
  return true;
}

}  // namespace zstore::server
