// ScriptedDafkaNode: a Dafka node a test drives step by step with raw
// ZeroMQ sockets and the codec, to talk to a real zstored. Its PUB is bound
// on a free loopback port and beaconed to a tower (so the store connects to
// it); its SUB is connected to the stores the test names and subscribed to
// the given message ids addressed to this node. Nothing runs in the
// background: a test beacons by calling tick() or wait_for().
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "protocol/dafka_messages.h"

namespace zstore::testing {

// A fresh random Dafka node address (dafka::make_address of a new uuid).
std::string random_dafka_address();
// Sends frames as one multipart message (blocking).
void send_frames(zmq::socket_t& socket, const std::vector<std::string>& frames);

class ScriptedDafkaNode {
 public:
  using Predicate = std::function<bool(const protocol::dafka::Message&)>;

  // subscribed_ids: message ids ('A', 'D', ...) to receive when addressed
  // to this node (id + address prefix).
  ScriptedDafkaNode(zmq::context_t& ctx, std::uint16_t tower_port, const std::vector<char>& subscribed_ids);

  const std::string& address() const { return address_; }
  void connect(const std::string& store_endpoint) { sub_.connect(store_endpoint); }
  void send(const protocol::dafka::Message& msg);
  void send_raw(const std::vector<std::string>& frames) { send_frames(pub_, frames); }

  // Reads messages (beaconing meanwhile, calling retry every 200 ms when
  // given) until one satisfies pred or timeout passes; returns it.
  std::optional<protocol::dafka::Message> wait_for(const Predicate& pred,
                                                   std::chrono::milliseconds timeout = std::chrono::seconds(10),
                                                   const std::function<void()>& retry = {});
  // Beacons to the tower if the last beacon is 100 ms old.
  void tick();

 private:
  std::string address_;
  std::uint16_t port_ = 0;
  zmq::socket_t pub_;
  zmq::socket_t beacon_;
  zmq::socket_t sub_;
  std::chrono::steady_clock::time_point next_beacon_{};
};

}  // namespace zstore::testing
