#include "client/dafka_node.h"

#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <system_error>

#include <zmq_addon.hpp>

#include "protocol/beacon.h"
#include "protocol/dafka_codec.h"
#include "protocol/endpoint.h"
#include "security/curve_cert.h"
#include "transport/zmq_frames.h"

namespace zstore::client::dafka {

namespace wire = protocol::dafka;
namespace beacon = protocol::beacon;
using std::chrono::milliseconds;

namespace {

constexpr std::size_t kBatch = 256;  // messages read per socket per round

void block_signals() {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
}

}  // namespace

std::pair<std::string, std::string> tower_endpoints(const std::string& tower) {
  auto xsub = protocol::tcp_endpoint_at_offset(tower, 0);
  auto xpub = protocol::tcp_endpoint_at_offset(tower, 1);
  if (!xsub || !xpub) {
    throw std::invalid_argument("tower endpoint must be tcp://host:port with a port in 1..65534, got '" + tower + "'");
  }
  return {*xsub, *xpub};
}

std::string new_address() {
  uuid_t uuid;
  uuid_generate_random(uuid);
  return wire::make_address(uuid);
}

DafkaNode::DafkaNode(const NodeOptions& options)
    : address_(new_address()),
      beacon_interval_(options.beacon_interval),
      peer_timeout_(options.peer_timeout),
      security_(options.security),
      ctx_(1),
      publisher_(ctx_, zmq::socket_type::xpub),
      data_sub_(ctx_, zmq::socket_type::sub),
      beacon_pub_(ctx_, zmq::socket_type::pub),
      beacon_sub_(ctx_, zmq::socket_type::sub) {
  std::vector<std::pair<std::string, std::string>> towers;
  for (const auto& t : options.towers) towers.push_back(tower_endpoints(t));  // validate first

  for (auto* s : {&publisher_, &data_sub_, &beacon_pub_, &beacon_sub_}) s->set(zmq::sockopt::linger, 0);
  publisher_.set(zmq::sockopt::xpub_verbose, 1);
  if (security_.curve()) {  // subscribers are judged by read_zap() and settle_zap()
    zap_ = zmq::socket_t(ctx_, zmq::socket_type::router);
    zap_.set(zmq::sockopt::linger, 0);
    zap_.bind("inproc://zeromq.zap.01");
    publisher_.set(zmq::sockopt::curve_server, 1);
    publisher_.set(zmq::sockopt::curve_secretkey, security_.cert->secret_key);
    publisher_.set(zmq::sockopt::zap_domain, std::string("dafka-node"));
  }
  publisher_.bind(options.bind_endpoint);
  endpoint_ = publisher_.get(zmq::sockopt::last_endpoint);

  // endpoint_ is "tcp://host:port" (IPv6 hosts in brackets).
  auto bound = protocol::parse_tcp_endpoint(endpoint_);
  if (!bound) throw std::invalid_argument("Dafka node: cannot read the bound endpoint '" + endpoint_ + "'");
  beacon_port_ = bound->port;
  const std::string& bound_host = bound->host;
  if (!options.advertise_host.empty()) {
    beacon_host_ = options.advertise_host;
  } else if (bound_host != "0.0.0.0" && bound_host != "[::]" && bound_host != "*") {
    beacon_host_ = bound_host;
  }  // else empty: the tower uses the peer address

  beacon_sub_.set(zmq::sockopt::subscribe, beacon::kBeacon);
  beacon_sub_.set(zmq::sockopt::subscribe, beacon::kWelcome);
  security_.as_client(beacon_pub_);
  security_.as_client(beacon_sub_);
  beacon_pub_monitor_ = std::make_unique<security::HandshakeMonitor>(ctx_, beacon_pub_, security_.curve());
  beacon_sub_monitor_ = std::make_unique<security::HandshakeMonitor>(ctx_, beacon_sub_, security_.curve());
  for (const auto& [xsub, xpub] : towers) {
    beacon_pub_.connect(xsub);
    beacon_sub_.connect(xpub);
  }

  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
}

DafkaNode::~DafkaNode() {
  stop();
  // Before the sockets close (security/watched_socket.h says why).
  beacon_pub_monitor_->stop();
  beacon_sub_monitor_->stop();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void DafkaNode::start(Handler& handler) {
  handler_ = &handler;
  thread_ = std::thread([this] { run(); });
}

void DafkaNode::stop() {
  if (!thread_.joinable()) return;
  stopping_.store(true);
  wake();
  thread_.join();
}

void DafkaNode::wake() {
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);  // EAGAIN: already pending
}

std::string DafkaNode::handshake_error() const {
  std::lock_guard lock(handshake_mutex_);
  return handshake_error_;
}

// zstored (its stores and towers share one key) and the peers the towers
// announced, which passed the towers' allow list.
bool DafkaNode::admitted(const std::string& raw_key) const {
  std::string key = security::encode_key(raw_key);
  if (key == security_.server_key) return true;
  return std::any_of(peers_.begin(), peers_.end(), [&](const auto& p) { return p.second.key == key; });
}

namespace {
void zap_reply(zmq::socket_t& zap, std::string_view route, std::string_view id, bool ok) {
  const std::string_view reply[] = {route, "", "1.0", id, ok ? "200" : "400", ok ? "OK" : "not a known peer", "", ""};
  (void)transport::try_send(zap, protocol::FrameViews(reply));
}
}  // namespace

// [route, "", version, id, domain, address, identity, mechanism, key]
void DafkaNode::read_zap() {
  transport::Message msg;
  for (std::size_t i = 0; i < kBatch && transport::try_recv(zap_, &msg); ++i) {
    const auto& f = msg.parts;
    if (f.size() < 4) continue;
    bool curve = f.size() >= 9 && f[7].to_string_view() == "CURVE" && f[8].size() == 32;
    if (!curve) {
      zap_reply(zap_, f[0].to_string_view(), f[3].to_string_view(), false);
      continue;
    }
    zap_waiting_.push_back({f[0].to_string(), f[3].to_string(), f[8].to_string(), Clock::now() + peer_timeout_});
  }
  settle_zap(Clock::now());
}

void DafkaNode::settle_zap(Clock::time_point now) {
  for (auto it = zap_waiting_.begin(); it != zap_waiting_.end();) {
    bool ok = admitted(it->key);
    if (!ok && now < it->deadline) {
      ++it;
      continue;
    }
    zap_reply(zap_, it->route, it->id, ok);
    it = zap_waiting_.erase(it);
  }
}

// A failure stays the error until a tower speaks to us (read_beacons()).
void DafkaNode::read_monitors() {
  auto sub = beacon_sub_monitor_->poll();
  auto pub = beacon_pub_monitor_->poll();
  if (!sub && !pub) return;
  std::lock_guard lock(handshake_mutex_);
  handshake_error_ = sub ? sub->message : pub->message;
}

void DafkaNode::send(const wire::Message& msg) { (void)transport::try_send(publisher_, wire::encode(msg)); }

void DafkaNode::subscribe(const std::string& topic) { data_sub_.set(zmq::sockopt::subscribe, topic); }

void DafkaNode::run() {
  block_signals();
  next_beacon_ = Clock::now();
  Clock::time_point handler_due = Clock::now();
  while (!stopping_.load()) {
    // Exceptions do not leave the agent: a ZeroMQ error (other than the
    // context ending) or an unencodable message costs one round, counted.
    try {
      auto now = Clock::now();
      if (now >= next_beacon_) {
        send_beacon();
        expire_peers(now);
        next_beacon_ = now + beacon_interval_;
      }
      if (now >= handler_due) handler_due = handler_->on_timer(now);
      auto deadline = std::min(next_beacon_, handler_due);
      auto wait = std::chrono::ceil<milliseconds>(deadline - Clock::now());
      wait = std::clamp(wait, milliseconds(0), milliseconds(1000));

      zmq::pollitem_t items[] = {
          {beacon_sub_.handle(), 0, ZMQ_POLLIN, 0},
          {data_sub_.handle(), 0, ZMQ_POLLIN, 0},
          {publisher_.handle(), 0, ZMQ_POLLIN, 0},
          {nullptr, wake_fd_, ZMQ_POLLIN, 0},
          {beacon_pub_monitor_->events().handle(), 0, ZMQ_POLLIN, 0},
          {beacon_sub_monitor_->events().handle(), 0, ZMQ_POLLIN, 0},
          {zap_.handle(), 0, ZMQ_POLLIN, 0},  // polled only with CURVE
      };
      zmq::poll(items, zap_ ? 7 : 6, wait);
      if (zap_ && (items[6].revents & ZMQ_POLLIN)) read_zap();
      if ((items[4].revents | items[5].revents) & ZMQ_POLLIN) read_monitors();
      if (items[3].revents & ZMQ_POLLIN) {
        std::uint64_t v;
        [[maybe_unused]] auto n = ::read(wake_fd_, &v, sizeof v);
        if (stopping_.load()) break;
        handler_->on_wakeup();
        handler_due = Clock::now();  // commands may change what is due
      }
      if (items[0].revents & ZMQ_POLLIN) read_beacons();
      if (!zap_waiting_.empty()) settle_zap(Clock::now());
      if (items[2].revents & ZMQ_POLLIN) read_publisher();
      if (items[1].revents & ZMQ_POLLIN) {
        read_data();
        handler_due = Clock::now();
      }
    } catch (const zmq::error_t& e) {
      if (e.num() == ETERM) break;
      errors_.fetch_add(1);
      std::this_thread::sleep_for(milliseconds(10));  // never spin on a persistent error
    } catch (const std::exception&) {
      errors_.fetch_add(1);
    }
  }
}

void DafkaNode::read_beacons() {
  transport::Message msg;
  for (std::size_t i = 0; i < kBatch && transport::try_recv(beacon_sub_, &msg); ++i) {
    if (i == 0) {
      std::lock_guard lock(handshake_mutex_);
      handshake_error_.clear();  // a tower speaks to us
    }
    auto frames = msg.frames();
    if (beacon::is_welcome(frames)) continue;  // we never wait for it
    auto decoded = beacon::decode_tower_beacon(frames);
    if (!decoded) {
      dropped_.fetch_add(1);
      continue;
    }
    if (decoded->uuid == address_) continue;  // our own beacon
    if (security_.curve() && decoded->key.empty()) {
      dropped_.fetch_add(1);  // a publisher we could not authenticate
      continue;
    }
    auto now = Clock::now();
    auto it = peers_.find(decoded->uuid);
    if (it != peers_.end() && (it->second.endpoint != decoded->endpoint || it->second.key != decoded->key)) {
      disconnect_endpoint(it->second.endpoint);
      peers_.erase(it);
      it = peers_.end();
    }
    if (it == peers_.end()) {
      if (!connect_endpoint(decoded->endpoint, decoded->key)) {
        dropped_.fetch_add(1);  // an endpoint ZeroMQ refuses
        continue;
      }
      peers_.emplace(decoded->uuid, Peer{decoded->endpoint, decoded->key, now});
      peer_count_.store(peers_.size());
    } else {
      it->second.last_seen = now;
    }
  }
}

void DafkaNode::expire_peers(Clock::time_point now) {
  for (auto it = peers_.begin(); it != peers_.end();) {
    if (now - it->second.last_seen > peer_timeout_) {
      disconnect_endpoint(it->second.endpoint);
      it = peers_.erase(it);
    } else {
      ++it;
    }
  }
  peer_count_.store(peers_.size());
}

// libzmq reads the CURVE options at connect(): the peer's key is set just
// before. An endpoint announced with another key (a node restarted there)
// is connected again with the new one.
bool DafkaNode::connect_endpoint(const std::string& endpoint, const std::string& key) {
  auto& conn = endpoint_refs_[endpoint];
  if (conn.refs == 0 || conn.key != key) {
    try {
      if (conn.refs > 0) data_sub_.disconnect(endpoint);
      if (security_.curve()) {
        security::SocketSecurity peer = security_;
        peer.server_key = key;
        peer.as_client(data_sub_);
      }
      data_sub_.connect(endpoint);
    } catch (const zmq::error_t&) {
      endpoint_refs_.erase(endpoint);
      return false;
    }
    conn.key = key;
  }
  ++conn.refs;
  return true;
}

void DafkaNode::disconnect_endpoint(const std::string& endpoint) {
  auto it = endpoint_refs_.find(endpoint);
  if (it == endpoint_refs_.end() || --it->second.refs > 0) return;
  endpoint_refs_.erase(it);
  try {
    data_sub_.disconnect(endpoint);
  } catch (const zmq::error_t&) {
  }
}

void DafkaNode::send_beacon() {
  std::string key = security_.curve() ? security_.cert->public_key : std::string();
  (void)transport::try_send(beacon_pub_, beacon::encode(beacon::NodeBeacon{address_, beacon_host_, beacon_port_, key}));
}

void DafkaNode::read_data() {
  transport::Message msg;
  for (std::size_t i = 0; i < kBatch && transport::try_recv(data_sub_, &msg); ++i) {
    auto decoded = wire::decode(msg.frames());
    if (!decoded) {
      dropped_.fetch_add(1);
      continue;
    }
    handler_->on_message(std::move(decoded).value());
  }
}

void DafkaNode::read_publisher() {
  transport::Message msg;
  for (std::size_t i = 0; i < kBatch && transport::try_recv(publisher_, &msg); ++i) {
    if (msg.views.size() != 1 || msg.views[0].empty()) continue;
    auto data = msg.views[0];
    handler_->on_subscription(data[0] == 1, data.substr(1));
  }
}

}  // namespace zstore::client::dafka
