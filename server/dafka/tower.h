// Tower: an embedded Dafka tower (discovery relay, specs/DAFKA-WIRE.md).
// XSUB bound at tcp://bind:T receives node beacons; XPUB bound at T+1 sends
// the welcome "W" to each new subscriber and a tower beacon
// "B | uuid | tcp://host:port" for each node beacon, using the connection's
// peer address when the node left its host empty. Subscriptions arriving on
// the XPUB are forwarded upstream to the XSUB, except welcome ones ('W').
// The CURVE key a node beacon carries (protocol/beacon.h) is forwarded with
// it. With a certificate in `security` both sockets are CURVE servers, ZAP
// domains "tower-beacons" (T) and "tower-peers" (T+1): only allowed keys
// announce themselves or hear of others; a key removed from the allow list
// (revocations) ends every connection to both, so each node authenticates
// again and the removed one is refused.
// start() binds and runs the reactor on its own thread; stop() joins it.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "security/curve_socket.h"
#include "server/reactor/bound_endpoint.h"
#include "server/reactor/connection_watch.h"
#include "server/access/key_revocations.h"
#include "server/reactor/log.h"
#include "server/reactor/reactor_thread.h"
#include "server/dafka/tower_metrics.h"

namespace zstore::server {

class Tower {
 public:
  // revocations: the allow list's (zap_handler.h), or null; connections:
  // caps both ports' connections (connection_watch.h), or null. Both
  // outlive the tower.
  Tower(zmq::context_t& ctx, std::string bind, std::uint16_t port, TowerMetrics& metrics,
        security::SocketSecurity security = {}, const KeyRevocations* revocations = nullptr,
        ConnectionWatch* connections = nullptr);
  ~Tower();
  Tower(const Tower&) = delete;
  Tower& operator=(const Tower&) = delete;

  // Binds both sockets (throws zmq::error_t on failure) and starts the thread.
  void start();
  // Stops and joins the thread. Idempotent.
  void stop();

  // {XSUB endpoint, XPUB endpoint}
  std::vector<std::string> endpoints() const;

 private:
  void run();
  void forward_beacons();
  void forward_subscriptions();
  void follow_revocations();

  zmq::context_t& ctx_;
  std::string bind_;
  std::uint16_t port_;
  TowerMetrics& metrics_;
  security::SocketSecurity security_;
  zmq::socket_t xsub_;
  zmq::socket_t xpub_;
  BoundEndpoint xsub_ep_;
  BoundEndpoint xpub_ep_;
  KeyRevocations::Watch revocations_;
  ConnectionWatch* connections_ = nullptr;
  RateLimiter bad_input_log_;
  ReactorThread reactor_{metrics_.loop_heartbeat_ms};
};

}  // namespace zstore::server
