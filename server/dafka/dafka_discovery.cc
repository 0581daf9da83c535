#include "server/dafka/dafka_discovery.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>

#include "protocol/beacon.h"
#include "protocol/endpoint.h"
#include "server/reactor/zmq_frames.h"

namespace zstore::server {

namespace beacon = protocol::beacon;

DafkaDiscovery::DafkaDiscovery(zmq::context_t& ctx, DiscoveryConfig config, DafkaMetrics& metrics)
    : ctx_(ctx), config_(std::move(config)), metrics_(metrics) {}

void DafkaDiscovery::start() {
  pub_ = zmq::socket_t(ctx_, zmq::socket_type::pub);
  pub_.set(zmq::sockopt::linger, 0);
  pub_.set(zmq::sockopt::sndhwm, 16);
  sub_ = zmq::socket_t(ctx_, zmq::socket_type::sub);
  sub_.set(zmq::sockopt::linger, 0);
  sub_.set(zmq::sockopt::maxmsgsize, std::int64_t{4096});
  sub_.set(zmq::sockopt::subscribe, std::string(beacon::kBeacon));
  sub_.set(zmq::sockopt::subscribe, std::string(beacon::kWelcome));
  config_.security.as_client(pub_);
  config_.security.as_client(sub_);
  for (const auto& tower : config_.towers) {
    auto xsub = protocol::tcp_endpoint_at_offset(tower, 0);
    auto xpub = protocol::tcp_endpoint_at_offset(tower, 1);
    if (!xsub || !xpub) throw std::invalid_argument("not a tower endpoint tcp://host:T: '" + tower + "'");
    pub_.connect(*xsub);
    sub_.connect(*xpub);
  }
  next_beacon_ = Clock::now();
}

void DafkaDiscovery::close() {
  pub_.close();
  sub_.close();
}

DafkaDiscovery::Clock::time_point DafkaDiscovery::next_deadline() const {
  auto next = next_beacon_;
  for (const auto& [uuid, peer] : peers_) next = std::min(next, peer.last_seen + config_.timeout);
  return next;
}

void DafkaDiscovery::beacon() {
  std::string key = config_.security.curve() ? config_.security.cert->public_key : std::string();
  beacon::NodeBeacon b{config_.address, config_.advertise, config_.port, key};
  try {
    (void)try_send(pub_, beacon::encode(b));
  } catch (const std::invalid_argument& e) {  // e.g. an --advertise host over 255 bytes
    bad_input_log_.log(spdlog::level::err, "cannot beacon: {}", e.what());
  }
}

void DafkaDiscovery::on_readable(std::vector<PeerChange>* changes) {
  ReceivedMessage msg;
  for (int i = 0; i < 1024 && try_recv(sub_, &msg); ++i) {
    if (beacon::is_welcome(msg.frames())) continue;
    auto b = beacon::decode_tower_beacon(msg.frames());
    if (!b) {
      metrics_.malformed.count(b.error().kind);
      bad_input_log_.log(spdlog::level::warn, "dropped malformed tower beacon ({}): {}",
                         protocol::to_string(b.error().kind), b.error().detail);
      continue;
    }
    if (b->uuid == config_.address) continue;  // our own beacon
    auto now = Clock::now();
    auto it = peers_.find(b->uuid);
    if (it != peers_.end() && it->second.endpoint == b->endpoint && it->second.key == b->key) {
      it->second.last_seen = now;
      continue;
    }
    if (it != peers_.end()) changes->push_back({PeerChange::Kind::kDisconnect, it->second.endpoint, it->second.key});
    peers_[b->uuid] = Peer{b->endpoint, b->key, now};
    changes->push_back({PeerChange::Kind::kConnect, b->endpoint, b->key});
    next_beacon_ = std::min(next_beacon_, std::max(now, last_beacon_ + kAnswerGap));
    peer_log_.log(spdlog::level::info, "Dafka peer {} at {}{}", b->uuid, b->endpoint,
                  b->key.empty() ? "" : " (key " + b->key + ")");
  }
}

void DafkaDiscovery::on_timer(std::vector<PeerChange>* changes) {
  auto now = Clock::now();
  if (now >= next_beacon_) {
    beacon();
    last_beacon_ = now;
    next_beacon_ = now + config_.interval;
  }
  for (auto it = peers_.begin(); it != peers_.end();) {
    if (now - it->second.last_seen < config_.timeout) {
      ++it;
      continue;
    }
    peer_log_.log(spdlog::level::info, "Dafka peer {} at {} timed out", it->first, it->second.endpoint);
    changes->push_back({PeerChange::Kind::kDisconnect, it->second.endpoint, it->second.key});
    it = peers_.erase(it);
  }
}

}  // namespace zstore::server
