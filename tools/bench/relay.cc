#include "tools/bench/relay.h"

#include <atomic>
#include <utility>

namespace zstore::bench {

namespace {
using Ready = SourceThread::Ready;
}  // namespace

std::vector<std::string> bind_relay_sockets(zmq::socket_t& sub, zmq::socket_t& pub) {
  for (zmq::socket_t* s : {&sub, &pub}) s->set(zmq::sockopt::linger, 0);
  sub.set(zmq::sockopt::rcvhwm, 0);
  pub.set(zmq::sockopt::sndhwm, 0);
  sub.set(zmq::sockopt::subscribe, "");
  sub.bind("tcp://127.0.0.1:*");
  pub.bind("tcp://127.0.0.1:*");
  return {sub.get(zmq::sockopt::last_endpoint), pub.get(zmq::sockopt::last_endpoint)};
}

Relay::Relay(int cpu)
    : thread_("relay", cpu, [this](zmq::context_t& context, const std::atomic<bool>&, const Ready& ready) {
        static std::atomic<int> relays{0};
        const std::string control_endpoint = "inproc://bench-relay-control-" + std::to_string(relays++);
        zmq::socket_t sub(context, zmq::socket_type::sub);
        zmq::socket_t pub(context, zmq::socket_type::pub);
        zmq::socket_t control(context, zmq::socket_type::pair);
        zmq::socket_t stopper(context, zmq::socket_type::pair);
        for (zmq::socket_t* s : {&control, &stopper}) s->set(zmq::sockopt::linger, 0);
        auto endpoints = bind_relay_sockets(sub, pub);
        // The control socket must share the relay's context.
        control.bind(control_endpoint);
        stopper.connect(control_endpoint);
        stopper_ = &stopper;
        ready(std::move(endpoints));
        zmq::proxy_steerable(sub, pub, zmq::socket_ref(), control);
      }) {}

Relay::~Relay() {
  // The stopper socket belongs to the relay thread's context; sending one
  // message on it from here is the documented way to end a steerable proxy
  // (the proxy thread is blocked in zmq_poll and does not use the socket).
  // thread_ then joins.
  (void)stopper_->send(zmq::str_buffer("TERMINATE"), zmq::send_flags::none);
}

}  // namespace zstore::bench
