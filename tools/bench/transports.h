// The Transports of the load generator (load.h).
//
// PubSubTransport: each writer a PUB connected to every write endpoint (a
// CHP collector or the relay's SUB; every member's collector of a pair),
// with a Dafka partition of its own (a random node address, so that
// Dafka-shaped records through a relay are those a producer node sends); the
// receiver one SUB connected to every read endpoint (a CHP publisher or the
// relay's PUB), reading the body from the last frame of each message (KVPUB
// value, Dafka content). Every socket is a CURVE client when `security` has
// a certificate.
//
// DafkaTransport: each writer a Dafka producer node: an XPUB bound on
// loopback, beaconing to the tower so the store connects to it (open()
// waits up to 30 s for the store's subscription); the receiver a SUB on the
// store's publisher subscribed to ACKs of every writer's partition.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "security/curve_socket.h"
#include "tools/bench/load.h"

namespace zstore::bench {

class PubSubTransport : public Transport {
 public:
  PubSubTransport(zmq::context_t& context, std::string write_endpoint, std::string read_endpoint,
                  security::SocketSecurity security = {});
  PubSubTransport(zmq::context_t& context, std::vector<std::string> write_endpoints,
                  std::vector<std::string> read_endpoints, security::SocketSecurity security = {});
  std::unique_ptr<Outlet> open(int writer) override;
  void receive(Board& board, const std::vector<std::string>& partitions) override;

 private:
  zmq::context_t& context_;
  std::vector<std::string> write_endpoints_;
  std::vector<std::string> read_endpoints_;
  security::SocketSecurity security_;
};

class DafkaTransport : public Transport {
 public:
  // tower: "tcp://host:T" (beacons go to T); store: the store's publisher.
  // security: CURVE for every node and the ACK subscriber (plain by default).
  DafkaTransport(zmq::context_t& context, std::string tower, std::string store, security::SocketSecurity security = {});
  std::unique_ptr<Outlet> open(int writer) override;
  void receive(Board& board, const std::vector<std::string>& partitions) override;

 private:
  zmq::context_t& context_;
  std::string tower_;
  std::string store_;
  security::SocketSecurity security_;
};

// A Dafka node as the benchmark uses it: a random address, an XPUB bound on
// loopback and beacons to a tower every second (tick()). With CURVE its
// publisher is a CURVE server under security.cert, which its beacons announce.
class BenchNode {
 public:
  BenchNode(zmq::context_t& context, const std::string& tower, const security::SocketSecurity& security = {});
  // Waits (beaconing) until some peer subscribed to our publisher.
  bool wait_subscriber(std::chrono::milliseconds timeout);
  void tick();  // a beacon when one is due; drains subscription messages
  zmq::socket_t& publisher() { return publisher_; }
  const std::string& address() const { return address_; }

 private:
  zmq::socket_t publisher_;
  zmq::socket_t beacon_;
  std::string address_;
  std::uint16_t port_ = 0;
  std::string key_;  // our public key in beacons (CURVE), or empty
  std::chrono::steady_clock::time_point next_beacon_{};
  bool subscribed_ = false;
};

// A random Dafka node address: 32 uppercase hex characters.
std::string random_address();

}  // namespace zstore::bench
