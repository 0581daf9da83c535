// ChpPeer: a raw CHP client built only from the spec and the codec, for
// conformance tests of zstored and for zstore-torture (DEALER to P, SUB to
// P+1, PUB to P+2).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "protocol/chp_codec.h"
#include "security/curve_socket.h"

namespace zstore::testing {

struct ChpSnapshot {
  std::map<std::string, protocol::chp::KvMsg> entries;
  std::uint64_t sequence = 0;
  std::string subtree;                         // from KTHXBAI frame 4
  std::string properties;                      // from KTHXBAI frame 5 (zstore's extensions)
  std::vector<protocol::chp::KvMsg> in_order;  // every KVSYNC as received
};

class ChpPeer {
 public:
  // base: "tcp://127.0.0.1:P". Subscribes to everything. With a
  // certificate in security, every socket is a CURVE client.
  ChpPeer(zmq::context_t& ctx, const std::string& host, std::uint16_t port,
          const security::SocketSecurity& security = {});

  // Sends raw frames to the collector (P+2) or snapshot port (P).
  void send_collector(const protocol::Frames& frames);
  void send_snapshot_port(const protocol::Frames& frames);

  // KVSET with a fresh random uuid (returned).
  std::string set(const std::string& key, const std::string& value, const std::string& properties = "");

  // ICANHAZ? then collect until KTHXBAI; nullopt on time-out, also when no
  // connection took the request in time.
  std::optional<ChpSnapshot> snapshot(const std::string& subtree = "",
                                      std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // The same with zstore's resume frame: the last sequence applied.
  std::optional<ChpSnapshot> resume(const std::string& subtree, std::uint64_t after,
                                    std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // An HA follower's CATCHUP? after a sequence gap (docs/chp-extensions.md).
  std::optional<ChpSnapshot> catch_up(std::uint64_t after,
                                      std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // An HA follower's PEERSNAPSHOT? (the whole map with exact expiries).
  std::optional<ChpSnapshot> peer_snapshot(std::chrono::milliseconds timeout = std::chrono::seconds(10));

  // Next KVPUB or HUGZ from the publisher, skipping nothing.
  std::optional<protocol::chp::Update> next_update(std::chrono::milliseconds timeout);
  // Next KVPUB (HUGZ skipped) matching key; nullopt on time-out.
  std::optional<protocol::chp::KvMsg> wait_kvpub(const std::string& key, std::chrono::milliseconds timeout);

  // Blocks until the PUB->SUB paths both ways carry messages: sends probe
  // KVSETs until the KVPUB of one of them (its UUID) is seen. False on
  // time-out.
  bool wait_connected(std::chrono::milliseconds timeout = std::chrono::seconds(10));

 private:
  std::optional<ChpSnapshot> ask(const protocol::Frames& request, std::chrono::milliseconds timeout);
  std::optional<ChpSnapshot> collect_snapshot(std::chrono::milliseconds timeout);

  zmq::socket_t dealer_;
  zmq::socket_t sub_;
  zmq::socket_t pub_;
};

}  // namespace zstore::testing
