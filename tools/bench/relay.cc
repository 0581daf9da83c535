#include "tools/bench/relay.h"

#include <condition_variable>
#include <mutex>
#include <stdexcept>

#include "tools/bench/system.h"

namespace zstore::bench {

namespace {

struct Startup {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
};

}  // namespace

Relay::Relay(int cpu) {
  static std::atomic<int> relays{0};
  control_ = "inproc://bench-relay-control-" + std::to_string(relays++);
  Startup startup;
  // The relay's context lives on its thread, so that ZeroMQ's I/O thread
  // inherits the relay's CPU pinning; the control socket must share it.
  thread_ = std::thread([this, cpu, &startup] {
    try {
      pin_current_thread(cpu);
      zmq::context_t context(1);
      zmq::socket_t sub(context, zmq::socket_type::sub);
      zmq::socket_t pub(context, zmq::socket_type::pub);
      zmq::socket_t control(context, zmq::socket_type::pair);
      for (zmq::socket_t* s : {&sub, &pub, &control}) s->set(zmq::sockopt::linger, 0);
      sub.set(zmq::sockopt::rcvhwm, 0);
      pub.set(zmq::sockopt::sndhwm, 0);
      sub.set(zmq::sockopt::subscribe, "");
      sub.bind("tcp://127.0.0.1:*");
      pub.bind("tcp://127.0.0.1:*");
      control.bind(control_);
      zmq::socket_t stopper(context, zmq::socket_type::pair);
      stopper.set(zmq::sockopt::linger, 0);
      stopper.connect(control_);
      {
        // Notified under the lock: once the constructor sees done it
        // returns and destroys startup, cv included.
        std::lock_guard<std::mutex> lock(startup.mutex);
        input_ = sub.get(zmq::sockopt::last_endpoint);
        output_ = pub.get(zmq::sockopt::last_endpoint);
        stopper_ = &stopper;
        startup.done = true;
        startup.cv.notify_all();
      }
      zmq::proxy_steerable(sub, pub, zmq::socket_ref(), control);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(startup.mutex);
      if (!startup.done) {
        error_ = e.what();
        startup.done = true;
        startup.cv.notify_all();
      }
    }
  });
  std::unique_lock<std::mutex> lock(startup.mutex);
  startup.cv.wait(lock, [&] { return startup.done; });
  if (!error_.empty()) {
    lock.unlock();
    thread_.join();
    throw std::runtime_error("relay: " + error_);
  }
}

Relay::~Relay() {
  // The stopper socket belongs to the relay thread's context; sending one
  // message on it from here is the documented way to end a steerable proxy
  // (the proxy thread is blocked in zmq_poll and does not use the socket).
  (void)stopper_->send(zmq::str_buffer("TERMINATE"), zmq::send_flags::none);
  thread_.join();
}

}  // namespace zstore::bench
