// StopSignal: lets the main thread sleep until SIGINT or SIGTERM arrives or
// another thread calls trigger(). Installs its handlers for its lifetime;
// at most one may exist at a time.
#pragma once

namespace zstore::cli {

class StopSignal {
 public:
  StopSignal();   // throws std::runtime_error if the self-pipe cannot be made
  ~StopSignal();  // restores the default handlers
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;

  void trigger();             // thread-safe and async-signal-safe
  void wait();                // returns once triggered or signalled
  int signal_number() const;  // the signal that stopped us, 0 if trigger()

 private:
  int fds_[2] = {-1, -1};
};

}  // namespace zstore::cli
