#include "server/jobs/periodic_thread.h"

#include <utility>

namespace zstore::server {

void PeriodicThread::start(std::function<void()> every, std::function<void()> at_stop) {
  {
    std::lock_guard lock(mutex_);
    stopping_ = false;
  }
  thread_ = std::thread([this, every = std::move(every), at_stop = std::move(at_stop)] {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
      lock.unlock();
      every();
      lock.lock();
    }
    lock.unlock();
    if (at_stop) at_stop();
  });
}

void PeriodicThread::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

}  // namespace zstore::server
