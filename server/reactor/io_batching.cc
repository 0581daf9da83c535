#include "server/reactor/io_batching.h"

#include <sched.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace zstore::server {
namespace {

std::atomic<int> next_prefix{1};

// Threads of this process whose name starts with prefix.
std::vector<pid_t> threads_named(const std::string& prefix) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    if (!std::getline(comm, name) || name.compare(0, prefix.size(), prefix) != 0) continue;
    try {
      out.push_back(static_cast<pid_t>(std::stol(task.path().filename().string())));
    } catch (const std::exception&) {
    }
  }
  return out;
}

}  // namespace

IoBatching::IoBatching(zmq::context_t& ctx) {
  int prefix = next_prefix.fetch_add(1);
  // libzmq names its threads "PREFIX/ZMQbg/IO/N" (at most 15 characters).
  ctx.set(zmq::ctxopt::thread_name_prefix, prefix);
  io_prefix_ = std::to_string(prefix) + "/ZMQbg/IO/";
}

void IoBatching::Vote::set(bool streaming) {
  if (batching_ == nullptr || streaming == on_) return;
  on_ = streaming;
  batching_->change(streaming ? 1 : -1);
}

bool IoBatching::batching() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return batching_;
}

std::uint64_t IoBatching::batch_periods() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return periods_;
}

void IoBatching::change(int delta) {
  std::lock_guard<std::mutex> lock(mutex_);
  votes_ += delta;
  bool want = votes_ > 0;
  if (want == batching_ || disabled_) return;
  if (tids_.empty()) tids_ = threads_named(io_prefix_);
  if (tids_.empty()) return;  // not started yet: the next change looks again
  if (apply(want ? SCHED_BATCH : SCHED_OTHER)) {
    batching_ = want;
    periods_ += want ? 1 : 0;
  } else {
    disabled_ = true;
    static_cast<void>(apply(SCHED_OTHER));
    batching_ = false;
  }
}

bool IoBatching::apply(int policy) {
  sched_param param{};
  for (pid_t tid : tids_) {
    // A thread that ended (the context terminating) is not an error.
    if (sched_setscheduler(tid, policy, &param) != 0 && errno != ESRCH) {
      spdlog::warn("cannot change the scheduling of ZeroMQ's I/O thread {}: {}; streaming goes on without it", tid,
                   std::strerror(errno));
      return false;
    }
  }
  return true;
}

}  // namespace zstore::server
