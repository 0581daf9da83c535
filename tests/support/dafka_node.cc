#include "tests/support/dafka_node.h"

#include <uuid/uuid.h>

#include <iterator>
#include <string_view>

#include <zmq_addon.hpp>

#include "protocol/beacon.h"
#include "protocol/dafka_codec.h"
#include "tests/support/test_support.h"

namespace zstore::testing {

namespace dafka = protocol::dafka;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

std::string random_dafka_address() {
  uuid_t u;
  uuid_generate(u);
  return dafka::make_address(u);
}

void send_frames(zmq::socket_t& socket, const std::vector<std::string>& frames) {
  for (std::size_t i = 0; i < frames.size(); ++i) {
    socket.send(zmq::buffer(frames[i]), i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
}

ScriptedDafkaNode::ScriptedDafkaNode(zmq::context_t& ctx, std::uint16_t tower_port,
                                     const std::vector<char>& subscribed_ids)
    : address_(random_dafka_address()),
      pub_(ctx, zmq::socket_type::pub),
      beacon_(ctx, zmq::socket_type::pub),
      sub_(ctx, zmq::socket_type::sub) {
  for (auto* s : {&pub_, &beacon_, &sub_}) s->set(zmq::sockopt::linger, 0);
  pub_.set(zmq::sockopt::sndhwm, 0);  // a burst of records is not dropped by us
  port_ = free_port();
  pub_.bind("tcp://127.0.0.1:" + std::to_string(port_));
  beacon_.connect("tcp://127.0.0.1:" + std::to_string(tower_port));
  for (char id : subscribed_ids) sub_.set(zmq::sockopt::subscribe, std::string(1, id) + address_);
}

void ScriptedDafkaNode::send(const dafka::Message& msg) { send_frames(pub_, dafka::encode(msg)); }

std::optional<dafka::Message> ScriptedDafkaNode::wait_for(const Predicate& pred, std::chrono::milliseconds timeout,
                                                          const std::function<void()>& retry) {
  auto deadline = Clock::now() + timeout;
  Clock::time_point next_retry{};
  while (Clock::now() < deadline) {
    tick();
    if (retry && Clock::now() >= next_retry) {
      retry();
      next_retry = Clock::now() + 200ms;
    }
    zmq::pollitem_t item{sub_.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, 20ms) <= 0) continue;
    std::vector<zmq::message_t> parts;
    if (!zmq::recv_multipart(sub_, std::back_inserter(parts))) continue;
    std::vector<std::string_view> views;
    for (auto& p : parts) views.emplace_back(static_cast<const char*>(p.data()), p.size());
    auto m = dafka::decode(views);
    if (m && pred(*m)) return *m;
  }
  return std::nullopt;
}

void ScriptedDafkaNode::tick() {
  if (Clock::now() < next_beacon_) return;
  send_frames(beacon_, protocol::beacon::encode(protocol::beacon::NodeBeacon{address_, "127.0.0.1", port_}));
  next_beacon_ = Clock::now() + 100ms;
}

}  // namespace zstore::testing
