#include "server/tower.h"

#include <spdlog/spdlog.h>

#include <stdexcept>

#include "protocol/beacon.h"
#include "server/loop_metrics.h"
#include "server/reactor_turn.h"
#include "server/zmq_frames.h"

namespace zstore::server {

namespace beacon = protocol::beacon;

namespace {

std::string endpoint(const std::string& host, int port) { return "tcp://" + host + ":" + std::to_string(port); }

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
             security::SocketSecurity security)
    : ctx_(ctx), bind_(std::move(bind)), port_(port), metrics_(metrics), security_(std::move(security)) {}

Tower::~Tower() { stop(); }

std::vector<std::string> Tower::endpoints() const { return {endpoint(bind_, port_), endpoint(bind_, port_ + 1)}; }

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
  auto eps = endpoints();
  xsub_.bind(eps[0]);
  xpub_.bind(eps[1]);
  std::string stop_ep = "inproc://zstore-tower-stop-" + std::to_string(reinterpret_cast<std::uintptr_t>(this));
  stop_rx_ = zmq::socket_t(ctx_, zmq::socket_type::pair);
  stop_rx_.bind(stop_ep);
  stop_tx_ = zmq::socket_t(ctx_, zmq::socket_type::pair);
  stop_tx_.connect(stop_ep);
  metrics_.loop_heartbeat_ms = loop_clock_ms();  // started: healthy until it misses a turn
  thread_ = std::thread([this] { run(); });
}

void Tower::stop() {
  if (!thread_.joinable()) return;
  stop_tx_.send(zmq::str_buffer("stop"), zmq::send_flags::none);
  thread_.join();
  xsub_.close();
  xpub_.close();
  stop_rx_.close();
  stop_tx_.close();
}

void Tower::run() {
  spdlog::info("Dafka tower on {} (beacons in), {} (beacons out){}", endpoints()[0], endpoints()[1],
               security_.curve() ? ", CURVE" : "");
  auto turn = [this] {
    zmq::pollitem_t items[] = {{stop_rx_.handle(), 0, ZMQ_POLLIN, 0},
                               {xsub_.handle(), 0, ZMQ_POLLIN, 0},
                               {xpub_.handle(), 0, ZMQ_POLLIN, 0}};
    zmq::poll(items, 3, std::chrono::milliseconds(1000));  // turn at least every second: liveness
    if (items[0].revents & ZMQ_POLLIN) return false;
    if (items[1].revents & ZMQ_POLLIN) forward_beacons();
    if (items[2].revents & ZMQ_POLLIN) forward_subscriptions();
    return true;
  };
  do {
    metrics_.loop_heartbeat_ms = loop_clock_ms();
  } while (guarded_turn("Dafka tower", bad_input_log_, metrics_.loop_errors, turn));
  metrics_.loop_heartbeat_ms = 0;
  spdlog::info("Dafka tower stopped");
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
