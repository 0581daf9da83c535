// DafkaStore: connecting the SUB to the publishers discovery announces,
// within --dafka-peers and, with CURVE, to allowed keys only.
#include <cstdint>
#include <cstring>

#include <spdlog/spdlog.h>

#include "protocol/endpoint.h"
#include "server/dafka/dafka_store.h"

namespace zstore::server {

bool DafkaStore::key_allowed(const std::string& key) const {
  return !config_.peer_name || !config_.peer_name(key).empty();
}

bool DafkaStore::peer_allowed(const PeerChange& change) {
  auto refuse = [&](const char* why) {
    metrics_.peers_refused.fetch_add(1, std::memory_order_relaxed);
    peer_log_.log(spdlog::level::warn, "Dafka: not connecting to {}{}: {}", change.endpoint,
                  change.key.empty() ? "" : " (key " + change.key + ")", why);
    return false;
  };
  if (!config_.peers.empty()) {
    auto hp = protocol::parse_tcp_endpoint(change.endpoint);
    if (!hp || !protocol::in_ranges(config_.peers, hp->host)) return refuse("outside --dafka-peers");
  }
  if (!config_.security.curve()) return true;
  if (change.key.empty()) return refuse("its beacon carries no CURVE key");
  if (!key_allowed(change.key)) return refuse("its key is not in --curve-allow");
  return true;
}

// Connects the SUB with the peer's key as the server key (libzmq reads the
// CURVE options at connect()).
void DafkaStore::connect_sub(const std::string& endpoint, const std::string& key) {
  if (config_.security.curve()) {
    security::SocketSecurity peer = config_.security;
    peer.server_key = key;
    peer.as_client(sub_);
  }
  sub_.connect(endpoint);
}

// A known endpoint announced with another key (a node restarted there) is
// connected again with the new one.
void DafkaStore::connect_peer(const PeerChange& c) {
  auto it = connected_.find(c.endpoint);
  if (it != connected_.end() && it->second.key == c.key) {
    ++it->second.refs;
    return;
  }
  if (!peer_allowed(c)) return;
  if (it != connected_.end()) sub_.disconnect(c.endpoint);
  Connection& conn = connected_[c.endpoint];
  try {
    connect_sub(c.endpoint, c.key);
  } catch (const zmq::error_t&) {
    connected_.erase(c.endpoint);
    throw;
  }
  ++conn.refs;
  conn.key = c.key;
}

// The SUB's monitor reports each ended connection: a first frame of the
// event number (16 bits) and value (32 bits), then the endpoint.
void DafkaStore::on_sub_events() {
  for (int i = 0; i < 64; ++i) {
    zmq::message_t event;
    zmq::message_t endpoint;
    if (!sub_monitor_.recv(event, zmq::recv_flags::dontwait)) return;
    if (!event.more() || !sub_monitor_.recv(endpoint)) continue;
    std::uint16_t id = 0;
    if (event.size() >= sizeof id) std::memcpy(&id, event.data(), sizeof id);
    if (id == ZMQ_EVENT_DISCONNECTED) reconnect_peer(endpoint.to_string());
  }
}

// A publisher we still follow lost its connection: by a network error,
// which libzmq retries itself, or by a frame over the SUB's largest
// (--dafka-max-message-bytes), which ends the session for good. Either way
// a new connection replaces it, so one oversized record (skipped as a gap
// once its FETCHes fail) does not cut the publisher off.
void DafkaStore::reconnect_peer(const std::string& endpoint) {
  auto it = connected_.find(endpoint);
  if (it == connected_.end()) return;  // left on purpose (disconnect_peer, revocations)
  metrics_.peer_reconnects.fetch_add(1, std::memory_order_relaxed);
  peer_log_.log(spdlog::level::info, "Dafka: the connection to {} ended; connecting again", endpoint);
  try {
    sub_.disconnect(endpoint);
  } catch (const zmq::error_t&) {
    // The session already ended: nothing to leave.
  }
  try {
    connect_sub(endpoint, it->second.key);
  } catch (const zmq::error_t& e) {
    peer_log_.log(spdlog::level::warn, "Dafka: cannot connect to {} again: {}", endpoint, e.what());
    connected_.erase(it);
    metrics_.peers.store(connected_.size(), std::memory_order_relaxed);
  }
}

void DafkaStore::disconnect_peer(const PeerChange& c) {
  auto it = connected_.find(c.endpoint);
  if (it == connected_.end()) return;  // never connected
  if (--it->second.refs > 0) return;
  connected_.erase(it);
  sub_.disconnect(c.endpoint);
}

// A key removed from the allow list: every subscriber of our XPUB connects
// and authenticates again (the removed key is refused), and we leave the
// publishers announced with a key that is no longer allowed. Discovery does
// not announce a known peer again: one whose key comes back is connected
// once it has timed out and beacons anew.
void DafkaStore::follow_revocations() {
  xpub_ep_.retry();
  if (!revocations_.news()) return;
  spdlog::warn("Dafka: a key left the allow list: ending every connection to {}", xpub_ep_.endpoint());
  xpub_ep_.drop_connections();
  for (auto it = connected_.begin(); it != connected_.end();) {
    if (!key_allowed(it->second.key)) {
      spdlog::warn("Dafka: leaving the publisher {} (key {}): its key is no longer in --curve-allow", it->first,
                   it->second.key);
      metrics_.peers_refused.fetch_add(1, std::memory_order_relaxed);
      sub_.disconnect(it->first);
      it = connected_.erase(it);
    } else {
      ++it;
    }
  }
  metrics_.peers.store(connected_.size(), std::memory_order_relaxed);
}

void DafkaStore::on_discovery() {
  std::vector<PeerChange> changes;
  discovery_.on_readable(&changes);
  apply(changes);
}

// zstore_dafka_peers counts the publishers connected to, not those merely
// announced (a refused one is announced, never connected).
void DafkaStore::apply(const std::vector<PeerChange>& changes) {
  for (const auto& c : changes) {
    bool connect = c.kind == PeerChange::Kind::kConnect;
    try {
      connect ? connect_peer(c) : disconnect_peer(c);
    } catch (const zmq::error_t& e) {
      peer_log_.log(spdlog::level::warn, "Dafka: cannot {} {}: {}", connect ? "connect to" : "disconnect from",
                    c.endpoint, e.what());
    }
  }
  metrics_.peers.store(connected_.size(), std::memory_order_relaxed);
}

}  // namespace zstore::server
