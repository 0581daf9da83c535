// ReactorThread: the one way a reactor runs on its own thread. start() opens
// a stop signal (an eventfd), counts as the loop's first beat (so /healthz
// is not 'unhealthy' before the first turn) and runs the body; the body's
// loop() beats the heartbeat every turn and sets it to 0 when the loop ends;
// stop() signals and joins. Not thread-safe: start() and stop() belong to
// the owner's thread; stop_item() and loop() to the reactor's.
//
// The signal is a plain file descriptor, not a ZeroMQ socket: zmq_poll
// checks each socket item's mailbox (a getpid and a poll system call) in
// each of its passes, and a CHP turn under a paced load made 8.6 mailbox
// checks with an inproc stop pipe, 6.8 with the descriptor: fewer system calls a turn.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

#include <zmq.hpp>

#include "server/reactor/log.h"
#include "server/reactor/loop_metrics.h"
#include "server/reactor/reactor_turn.h"

namespace zstore::server {

class ReactorThread {
 public:
  // heartbeat_ms: the reactor's loop heartbeat (loop_clock_ms(), 0 = not
  // running); turns, when given, counts the loop's turns (an idle reactor
  // makes a few a second: a fast climb is a busy loop).
  explicit ReactorThread(std::atomic<std::int64_t>& heartbeat_ms, std::atomic<std::uint64_t>* turns = nullptr);
  ~ReactorThread();  // stops, if the owner did not
  ReactorThread(const ReactorThread&) = delete;
  ReactorThread& operator=(const ReactorThread&) = delete;

  // Opens the stop signal, marks the heartbeat and runs body on a new
  // thread. Throws std::system_error if the signal cannot be opened; the
  // thread is not started then.
  void start(std::function<void()> body);

  // Signals stop, joins the thread and closes the signal. Returns
  // false (and does nothing) when no thread runs. Idempotent.
  bool stop();

  bool running() const { return thread_.joinable(); }

  // The poll item of the stop signal (a file descriptor item): readable once
  // stop() was called. Poll it as the loop's first item and end the turn
  // (return false) when it is.
  zmq::pollitem_t stop_item() const { return {nullptr, stop_fd_, ZMQ_POLLIN, 0}; }

  // Runs turn() under guarded_turn() (named reactor, errors logged on log and
  // counted in errors) until it returns false, beating the heartbeat before
  // each turn; the heartbeat is 0 when it returns.
  template <typename Turn>
  void loop(std::string_view reactor, RateLimiter& log, std::atomic<std::uint64_t>& errors, Turn&& turn) {
    do {
      heartbeat_ms_ = loop_clock_ms();
      if (turns_ != nullptr) turns_->fetch_add(1, std::memory_order_relaxed);
    } while (guarded_turn(reactor, log, errors, turn));
    heartbeat_ms_ = 0;
  }

 private:
  std::atomic<std::int64_t>& heartbeat_ms_;
  std::atomic<std::uint64_t>* turns_;
  int stop_fd_ = -1;  // the eventfd, while a thread runs
  std::thread thread_;
};

}  // namespace zstore::server
