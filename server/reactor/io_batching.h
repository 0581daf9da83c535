// IoBatching: SCHED_BATCH for a ZeroMQ context's I/O threads while a
// reactor streams a long answer (a CHP snapshot, Dafka FETCH answers) or
// is behind on its input (BacklogVote).
//
// zstored's reactors and the context's I/O thread share a core. While a
// reactor streams, each message it queues wakes the I/O thread, which
// preempted the reactor to send that one message: two context switches
// per message, and a snapshot cost about twice the CPU per key of a
// ZeroMQ-only source (docs/benchmarks.md). A SCHED_BATCH thread does not
// preempt on wake-up, so the reactor fills the pipe and the I/O thread
// sends in bulk when the reactor waits. Always batching would delay
// updates (an I/O thread waiting for the reactor's time slice): paced
// update latency rose several-fold, so it holds only while some reactor
// streams or has a backlog.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <zmq.hpp>

namespace zstore::server {

class IoBatching {
 public:
  // Gives ctx's threads a name prefix of their own (a number unique in the
  // process) to find its I/O threads by: call before ctx has a socket.
  explicit IoBatching(zmq::context_t& ctx);
  IoBatching(const IoBatching&) = delete;
  IoBatching& operator=(const IoBatching&) = delete;

  // One per reactor: the I/O threads are SCHED_BATCH while any vote is
  // set, SCHED_OTHER otherwise. A null IoBatching makes a vote that does
  // nothing. set() is called by its reactor only; votes of several
  // reactors may change at once.
  class Vote {
   public:
    explicit Vote(IoBatching* batching) : batching_(batching) {}
    ~Vote() { set(false); }
    Vote(const Vote&) = delete;
    Vote& operator=(const Vote&) = delete;
    void set(bool streaming);

   private:
    IoBatching* batching_;
    bool on_ = false;
  };

  // A vote from a reactor's input, whose receive queue holds at most
  // queue_messages (its ZMQ_RCVHWM): set once a loop turn drained at least
  // on() messages (half the queue, at most kMaxOn: the reactor is behind,
  // and sending in bulk gets more through), cleared once a turn drains
  // fewer than off() (an eighth of on(): the load is light, each message's
  // latency matters more). Measured in docs/benchmarks.md. A threshold
  // above what the queue holds is reached only when the I/O thread refills
  // the queue during one drain, which the scheduler decides.
  class BacklogVote {
   public:
    static constexpr std::size_t kMaxOn = 512;
    BacklogVote(IoBatching* batching, std::size_t queue_messages)
        : vote_(batching),
          on_(std::clamp<std::size_t>(queue_messages / 2, 2, kMaxOn)),
          off_(std::max<std::size_t>(on_ / 8, 1)) {}
    void drained(std::size_t messages) {
      if (messages >= on_) vote_.set(true);
      if (messages < off_) vote_.set(false);
    }
    std::size_t on() const { return on_; }
    std::size_t off() const { return off_; }

   private:
    Vote vote_;
    std::size_t on_;
    std::size_t off_;
  };

  // Whether the I/O threads are batching now, and how many times they
  // began to (for tests and logs).
  bool batching() const;
  std::uint64_t batch_periods() const;
  // The thread name prefix ctx's I/O threads carry ("N/ZMQbg/IO/").
  const std::string& io_thread_prefix() const { return io_prefix_; }

 private:
  void change(int delta);
  bool apply(int policy);  // on every I/O thread; false when one refused it

  std::string io_prefix_;
  mutable std::mutex mutex_;
  int votes_ = 0;            // guarded by mutex_, as the rest
  std::vector<pid_t> tids_;  // found at the first vote that found any
  bool batching_ = false;
  std::uint64_t periods_ = 0;
  bool disabled_ = false;  // the system refused a policy change: tried no more
};

}  // namespace zstore::server
