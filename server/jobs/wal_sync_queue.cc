#include "server/jobs/wal_sync_queue.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace zstore::server {

WalSyncQueue::WalSyncQueue(std::function<storage::Status()> sync) : sync_(std::move(sync)) {
  fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "WAL sync signal (eventfd)");
  thread_ = std::thread([this] { run(); });
}

WalSyncQueue::~WalSyncQueue() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_.notify_one();
  thread_.join();
  ::close(fd_);
}

std::uint64_t WalSyncQueue::request() {
  std::uint64_t ticket;
  {
    std::lock_guard lock(mu_);
    ticket = ++requested_;
  }
  work_.notify_one();
  return ticket;
}

std::optional<bool> WalSyncQueue::outcome(std::uint64_t ticket) {
  std::lock_guard lock(mu_);
  while (!results_.empty() && results_.front().first < ticket) results_.pop_front();
  if (results_.empty()) return std::nullopt;
  return results_.front().second;
}

std::string WalSyncQueue::last_error() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

void WalSyncQueue::wait(std::uint64_t ticket) {
  std::unique_lock lock(mu_);
  settled_.wait(lock, [&] { return !results_.empty() && results_.back().first >= ticket; });
}

void WalSyncQueue::take_signal() {
  std::uint64_t count;
  while (::read(fd_, &count, sizeof count) == static_cast<ssize_t>(sizeof count)) {
  }
}

// Each pass syncs every write whose ticket was taken before it started: a
// ticket is taken after its write returned, so the sync covers the write.
void WalSyncQueue::run() {
  std::uint64_t synced = 0;
  std::unique_lock lock(mu_);
  for (;;) {
    work_.wait(lock, [&] { return stopping_ || requested_ > synced; });
    if (requested_ == synced) return;  // stopping, and every request was served
    const std::uint64_t through = requested_;
    lock.unlock();
    storage::Status s = sync_();
    lock.lock();
    synced = through;
    results_.emplace_back(through, s.ok());
    if (!s.ok()) last_error_ = s.message();
    settled_.notify_all();
    const std::uint64_t one = 1;
    (void)!::write(fd_, &one, sizeof one);
  }
}

}  // namespace zstore::server
