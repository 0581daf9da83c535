// PeriodicThread: the one way a database job (WAL sync, free-space watch,
// Dafka retention) runs on a thread of its own: every interval until stop(),
// which wakes the wait at once, lets a run in progress finish, runs the
// at_stop step (if any) on the thread and joins. start() and stop() belong
// to the owner's thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace zstore::server {

class PeriodicThread {
 public:
  explicit PeriodicThread(std::chrono::milliseconds interval) : interval_(interval) {}
  ~PeriodicThread() { stop(); }
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  // Runs every() after each interval, and at_stop() once when stopped.
  void start(std::function<void()> every, std::function<void()> at_stop = {});
  // Idempotent; nothing when it was not started.
  void stop();
  bool running() const { return thread_.joinable(); }

 private:
  std::chrono::milliseconds interval_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace zstore::server
