// DafkaNode: the part every Dafka client node shares (internal header).
//
// It owns the node's sockets and one background agent thread:
//   publisher  XPUB (verbose), bound to options.bind_endpoint; XPUB rather than
//              PUB so the node sees its subscribers (wire-identical to a PUB)
//   data SUB   connected to every peer publisher the towers announce
//   beacon PUB connected to each tower's XSUB (port T): node beacons
//   beacon SUB connected to each tower's XPUB (port T+1), subscribed to B and W
// Discovery follows the reference nodes: a tower beacon from another node
// connects the data SUB to its endpoint once; peer_timeout of silence
// disconnects it. Creation never waits for a tower's welcome.
// With CURVE (NodeOptions::security) the publisher is a CURVE server under
// our key, our beacons carry that key, the beacon sockets are CURVE clients
// of the towers, and the data SUB connects to a peer with the key its
// beacon carried (a beacon without one is dropped). The publisher admits
// (its own ZAP handler, answered on the agent thread) only zstored's key and
// the keys of the peers the towers announced; a key not yet announced waits
// for its beacon up to peer_timeout, then is refused. Socket monitors on the
// beacon sockets tell handshake_error() why the towers refuse us, until a
// tower speaks to us again.
//
// The Handler runs on the agent thread and is the only code that may call
// send() and subscribe(); wake() and the accessors are thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "client/dafka_options.h"
#include "protocol/dafka_messages.h"
#include "security/curve_socket.h"
#include "security/handshake_monitor.h"

namespace zstore::client::dafka {

using Clock = std::chrono::steady_clock;

class DafkaNode {
 public:
  class Handler {
   public:
    virtual ~Handler() = default;
    // A well-formed Dafka message from the data SUB (malformed ones are
    // counted and dropped before this).
    virtual void on_message(protocol::dafka::Message msg) = 0;
    // A (un)subscription a peer made on this node's publisher.
    virtual void on_subscription(bool subscribe, std::string_view topic) = 0;
    // wake() was called since the last time.
    virtual void on_wakeup() = 0;
    // Called every loop round; returns when it next wants to be called.
    virtual Clock::time_point on_timer(Clock::time_point now) = 0;
  };

  // Creates the sockets, binds the publisher and connects to the towers.
  // Throws std::invalid_argument for a malformed tower endpoint and
  // zmq::error_t when the publisher cannot bind.
  explicit DafkaNode(const NodeOptions& options);
  ~DafkaNode();  // stop()s; sockets close with linger 0
  DafkaNode(const DafkaNode&) = delete;
  DafkaNode& operator=(const DafkaNode&) = delete;

  // Starts the agent thread; `handler` must outlive stop().
  void start(Handler& handler);
  // Stops and joins the agent thread. Idempotent.
  void stop();
  // Makes the agent call Handler::on_wakeup() soon. Any thread.
  void wake();

  const std::string& address() const { return address_; }    // 32 hex chars
  const std::string& endpoint() const { return endpoint_; }  // bound publisher
  std::size_t peer_count() const { return peer_count_.load(); }
  std::uint64_t dropped_messages() const { return dropped_.load(); }  // malformed input
  std::uint64_t agent_errors() const { return errors_.load(); }       // caught in the loop
  // Why the latest handshake with a tower failed (a refused key, a wrong
  // server key, CURVE on one side only), or empty while none has failed
  // since a tower last spoke to us.
  std::string handshake_error() const;

  // Agent thread only (from Handler callbacks), or before start().
  void send(const protocol::dafka::Message& msg);
  void subscribe(const std::string& topic);

 private:
  struct Peer {
    std::string endpoint;
    std::string key;  // CURVE: the server key of its publisher
    Clock::time_point last_seen;
  };
  struct Connection {
    int refs = 0;     // peers announcing the endpoint
    std::string key;  // the server key it was connected with
  };

  void run();
  void read_beacons();
  void read_data();
  void read_publisher();
  void send_beacon();
  void expire_peers(Clock::time_point now);
  bool connect_endpoint(const std::string& endpoint, const std::string& key);
  void read_monitors();
  void read_zap();                         // ZAP requests for our publisher (CURVE): queued
  void settle_zap(Clock::time_point now);  // answers those now decided
  bool admitted(const std::string& raw_key) const;
  void disconnect_endpoint(const std::string& endpoint);

  std::string address_;
  std::string endpoint_;
  std::string beacon_host_;
  std::uint16_t beacon_port_ = 0;
  std::chrono::milliseconds beacon_interval_;
  std::chrono::milliseconds peer_timeout_;
  security::SocketSecurity security_;

  zmq::context_t ctx_;
  // Stopped in the destructor while the sockets they watch are open, and
  // declared before them so that their readers close last.
  std::unique_ptr<security::HandshakeMonitor> beacon_pub_monitor_;
  std::unique_ptr<security::HandshakeMonitor> beacon_sub_monitor_;
  zmq::socket_t publisher_;
  zmq::socket_t data_sub_;
  zmq::socket_t beacon_pub_;
  zmq::socket_t beacon_sub_;
  zmq::socket_t zap_;  // ROUTER at inproc://zeromq.zap.01 of ctx_ (CURVE only)
  struct ZapRequest {
    std::string route, id, key;  // routing id, request id, raw client key
    Clock::time_point deadline;
  };
  std::vector<ZapRequest> zap_waiting_;  // agent thread only
  int wake_fd_ = -1;
  mutable std::mutex handshake_mutex_;
  std::string handshake_error_;  // guarded by handshake_mutex_

  Handler* handler_ = nullptr;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> peer_count_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::uint64_t> errors_{0};
  std::map<std::string, Peer> peers_;  // by uuid; agent thread only
  // Peers per connected endpoint: a node restarted on the same port has a new
  // uuid while the old one is still timing out; one connection serves both.
  std::map<std::string, Connection> endpoint_refs_;
  Clock::time_point next_beacon_{};
};

// Splits a tower endpoint "tcp://host:T" into its XSUB ("tcp://host:T") and
// XPUB ("tcp://host:T+1") endpoints. Throws std::invalid_argument.
std::pair<std::string, std::string> tower_endpoints(const std::string& tower);

// A fresh node address: a libuuid UUID as 32 uppercase hex characters.
std::string new_address();

}  // namespace zstore::client::dafka
