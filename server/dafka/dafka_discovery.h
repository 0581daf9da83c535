// DafkaDiscovery: a Dafka node's side of the towers (specs/DAFKA-WIRE.md).
// A beacon PUB connected to each tower's XSUB (T) sends our node beacon
// "B | address | host | port" every interval; a SUB connected to each
// tower's XPUB (T+1) receives tower beacons. The peer table maps a node uuid
// to its publisher endpoint; a peer silent for the timeout is dropped. Our
// own beacon is ignored. A new peer (or one that came back or moved) gets
// our beacon at once, as reference nodes answer one (dafka_beacon.c), so it
// learns our publisher before it waits for an ACK we already sent; these
// answers come at most every kAnswerGap. Never waits for a tower: beacons sent before a tower
// is up are simply lost. With a certificate in `security` both sockets are
// CURVE clients of the towers (whose key is security.server_key) and our
// beacon carries our public key, so peers can connect to our publisher; a
// peer's key reaches the reactor with its endpoint. Owned and driven by one
// reactor thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "security/curve_socket.h"
#include "server/dafka/dafka_metrics.h"
#include "server/reactor/log.h"

namespace zstore::server {

struct DiscoveryConfig {
  std::string address;              // our node uuid (32 hex characters)
  std::string advertise;            // host others reach our publisher on (may be empty)
  std::uint16_t port = 0;           // our publisher port
  std::vector<std::string> towers;  // tcp://host:T
  std::chrono::milliseconds interval{1000};
  std::chrono::milliseconds timeout{4000};
  security::SocketSecurity security;  // plain without a certificate
};

// A change of the peer table the reactor applies to its subscriber.
struct PeerChange {
  enum class Kind { kConnect, kDisconnect } kind;
  std::string endpoint;
  std::string key;  // the peer's Z85 public key from its beacon (CURVE), or empty
};

class DafkaDiscovery {
 public:
  using Clock = std::chrono::steady_clock;
  DafkaDiscovery(zmq::context_t& ctx, DiscoveryConfig config, DafkaMetrics& metrics);

  // Creates and connects the sockets. Throws std::invalid_argument for a
  // tower that is not tcp://host:T, zmq::error_t when ZeroMQ refuses it.
  void start();
  void close();
  zmq::socket_t& subscriber() { return sub_; }

  // Reads waiting tower beacons; new or moved peers yield kConnect (and
  // kDisconnect of the old endpoint) and bring our next beacon forward to
  // now (on_timer sends it), or kAnswerGap after the last one.
  void on_readable(std::vector<PeerChange>* changes);
  // Beacons when due and drops silent peers (kDisconnect).
  void on_timer(std::vector<PeerChange>* changes);
  Clock::time_point next_deadline() const;

  // Answers to new peers are at most this close together (a flood of new
  // uuids costs a beacon per gap, not one per uuid).
  static constexpr std::chrono::milliseconds kAnswerGap{100};

 private:
  struct Peer {
    std::string endpoint;
    std::string key;
    Clock::time_point last_seen;
  };
  void beacon();

  zmq::context_t& ctx_;
  DiscoveryConfig config_;
  DafkaMetrics& metrics_;
  zmq::socket_t pub_;
  zmq::socket_t sub_;
  std::map<std::string, Peer> peers_;  // by uuid
  Clock::time_point next_beacon_{};
  Clock::time_point last_beacon_{};
  RateLimiter bad_input_log_;
  RateLimiter peer_log_;  // peers come and go as others choose: a flood of uuids is not a flood of lines
};

}  // namespace zstore::server
