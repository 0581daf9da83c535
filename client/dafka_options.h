// Options shared by the Dafka producer and consumer: where to find towers,
// where to bind the node's publisher, discovery timings, CURVE.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "security/curve_socket.h"

namespace zstore::client::dafka {

// zstored's embedded tower: XSUB at 5580, XPUB at 5581.
inline constexpr const char* kDefaultTower = "tcp://127.0.0.1:5580";

struct NodeOptions {
  // Each tower "tcp://host:T" has its XSUB at port T and its XPUB at T+1.
  std::vector<std::string> towers{kDefaultTower};
  // Where the node binds its publisher; the bound port is read back.
  std::string bind_endpoint = "tcp://127.0.0.1:*";
  // Host announced in beacons. Empty: the bound host, or an empty host
  // (the tower then uses the connection's peer address) for a wildcard bind.
  std::string advertise_host;
  std::chrono::milliseconds beacon_interval{1000};
  std::chrono::milliseconds peer_timeout{4000};
  // CURVE (docs/dafka-curve.md): our certificate (with its secret key) and
  // server_key, the public key of zstored (its towers and stores); no cert =
  // plain. With it the publisher is a CURVE server under our key, which our
  // beacons announce, admitting zstored's key and the peers the towers
  // announced; every connection is a CURVE client: to the towers
  // with server_key, to a peer's publisher with the key its beacon carried
  // (peers announcing none are ignored). A refused key or a wrong server
  // key shows in handshake_error() of the producer or consumer.
  security::SocketSecurity security;
};

}  // namespace zstore::client::dafka
