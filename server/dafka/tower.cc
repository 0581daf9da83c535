#include "server/dafka/tower.h"

#include <spdlog/spdlog.h>

#include <stdexcept>

#include "protocol/beacon.h"
#include "protocol/endpoint.h"
#include "server/reactor/zmq_frames.h"

namespace zstore::server {

namespace beacon = protocol::beacon;

namespace {

// The peer address ZeroMQ recorded for the connection a frame came on.
std::string peer_address(zmq::message_t& frame) {
  try {
    return frame.gets("Peer-Address");
  } catch (const zmq::error_t&) {
    return {};
  }
}

}  // namespace

Tower::Tower(zmq::context_t& ctx, std::string bind, std::uint16_t port, TowerMetrics& metrics,
             security::SocketSecurity security, const KeyRevocations* revocations, ConnectionWatch* connections)
    : ctx_(ctx),
      bind_(std::move(bind)),
      port_(port),
      metrics_(metrics),
      security_(std::move(security)),
      revocations_(revocations),
      connections_(connections) {}

Tower::~Tower() { stop(); }

std::vector<std::string> Tower::endpoints() const {
  return {protocol::tcp_endpoint(bind_, port_), protocol::tcp_endpoint(bind_, static_cast<std::uint16_t>(port_ + 1))};
}

void Tower::start() {
  xsub_ = zmq::socket_t(ctx_, zmq::socket_type::xsub);
  xsub_.set(zmq::sockopt::maxmsgsize, std::int64_t{4096});  // beacons are four short frames
  xsub_.set(zmq::sockopt::linger, 0);
  xpub_ = zmq::socket_t(ctx_, zmq::socket_type::xpub);
  xpub_.set(zmq::sockopt::xpub_welcome_msg, std::string(beacon::kWelcome));
  xpub_.set(zmq::sockopt::maxmsgsize, std::int64_t{4096});
  xpub_.set(zmq::sockopt::linger, 0);
  security_.as_server(xsub_, "tower-beacons");
  security_.as_server(xpub_, "tower-peers");
  if (connections_) {
    connections_->watch(xsub_, "tower-beacons");
    connections_->watch(xpub_, "tower-peers");
  }
  auto eps = endpoints();
  xsub_.bind(eps[0]);
  xpub_.bind(eps[1]);
  xsub_ep_ = BoundEndpoint(&xsub_, "tower beacon port", &metrics_.ports_unbound);
  xpub_ep_ = BoundEndpoint(&xpub_, "tower peer port", &metrics_.ports_unbound);
  reactor_.start([this] { run(); });
}

void Tower::stop() {
  if (!reactor_.stop()) return;
  if (connections_) {
    ConnectionWatch::unwatch(xsub_);
    ConnectionWatch::unwatch(xpub_);
  }
  xsub_.close();
  xpub_.close();
}

void Tower::run() {
  spdlog::info("Dafka tower on {} (beacons in), {} (beacons out){}", endpoints()[0], endpoints()[1],
               security_.curve() ? ", CURVE" : "");
  auto turn = [this] {
    zmq::pollitem_t items[] = {
        reactor_.stop_item(), {xsub_.handle(), 0, ZMQ_POLLIN, 0}, {xpub_.handle(), 0, ZMQ_POLLIN, 0}};
    bool unbound = xsub_ep_.unbound() || xpub_ep_.unbound();
    // Turn at least every second (liveness), every few ms while bound again.
    zmq::poll(items, 3, std::chrono::milliseconds(unbound ? 5 : 1000));
    if (items[0].revents & ZMQ_POLLIN) return false;
    follow_revocations();
    if (items[1].revents & ZMQ_POLLIN) forward_beacons();
    if (items[2].revents & ZMQ_POLLIN) forward_subscriptions();
    return true;
  };
  reactor_.loop("Dafka tower", bad_input_log_, metrics_.loop_errors, turn);
  spdlog::info("Dafka tower stopped");
}

void Tower::follow_revocations() {
  xsub_ep_.retry();
  xpub_ep_.retry();
  if (!revocations_.news()) return;
  spdlog::warn("CURVE: a key left the allow list: ending every connection to the tower ({}, {})", xsub_ep_.endpoint(),
               xpub_ep_.endpoint());
  xsub_ep_.drop_connections();
  xpub_ep_.drop_connections();
}

void Tower::forward_beacons() {
  ReceivedMessage msg;
  for (int i = 0; i < 1024 && try_recv(xsub_, &msg); ++i) {
    auto node = beacon::decode_node_beacon(msg.frames());
    if (!node) {
      metrics_.malformed.fetch_add(1, std::memory_order_relaxed);
      bad_input_log_.log(spdlog::level::warn, "tower dropped malformed beacon ({}): {}",
                         protocol::to_string(node.error().kind), node.error().detail);
      continue;
    }
    std::string host = node->host.empty() ? peer_address(msg.parts[0]) : node->host;
    if (host.empty() || host.size() > beacon::kMaxFieldBytes - 16) {
      metrics_.malformed.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    try {
      auto out = beacon::TowerBeacon{node->uuid, beacon::tower_endpoint(host, node->port), node->key};
      (void)try_send(xpub_, beacon::encode(out));
    } catch (const std::invalid_argument&) {  // a host the endpoint form cannot carry
      metrics_.malformed.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    metrics_.beacons_forwarded.fetch_add(1, std::memory_order_relaxed);
  }
}

void Tower::forward_subscriptions() {
  ReceivedMessage msg;
  for (int i = 0; i < 1024 && try_recv(xpub_, &msg); ++i) {
    if (msg.views.size() != 1 || msg.views[0].empty()) continue;
    std::string_view sub = msg.views[0];
    if (sub.size() >= 2 && sub[1] == beacon::kWelcome[0]) continue;  // the welcome is ours alone
    (void)try_send(xsub_, {std::string(sub)});
  }
}

}  // namespace zstore::server
