#include "tools/bench/source_thread.h"

#include <condition_variable>
#include <iostream>
#include <mutex>
#include <stdexcept>

#include "tools/bench/system.h"

namespace zstore::bench {

SourceThread::SourceThread(std::string name, int cpu, Body body) {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  std::string error;
  // The context lives on the thread so that ZeroMQ's I/O thread inherits
  // its CPU pinning.
  thread_ = std::thread([&, name, cpu, body = std::move(body)] {
    auto finish = [&](std::vector<std::string> endpoints, std::string failure) {
      // Notified under the lock: once the constructor sees done it returns
      // and destroys what these references point to.
      std::lock_guard<std::mutex> lock(mutex);
      endpoints_ = std::move(endpoints);
      error = std::move(failure);
      done = true;
      cv.notify_all();
    };
    bool started = false;  // then the constructor's locals are gone
    try {
      pin_current_thread(cpu);
      zmq::context_t context(1);
      body(context, stop_, [&](std::vector<std::string> endpoints) {
        finish(std::move(endpoints), "");
        started = true;
      });
      if (!started) finish({}, "returned before it was ready");
    } catch (const std::exception& e) {
      if (!started) {
        std::string what = e.what();
        finish({}, what.empty() ? "failed" : what);  // empty means success to the constructor
      } else {
        std::cerr << name << " failed: " << e.what() << '\n';  // its client then times out
      }
    }
  });
  std::unique_lock<std::mutex> lock(mutex);
  cv.wait(lock, [&] { return done; });
  if (!error.empty()) {
    lock.unlock();
    thread_.join();
    throw std::runtime_error(name + ": " + error);
  }
}

SourceThread::~SourceThread() {
  stop_ = true;
  thread_.join();
}

}  // namespace zstore::bench
