#include "tools/bench/transports.h"

#include <uuid/uuid.h>

#include <stdexcept>
#include <unordered_map>

#include "protocol/beacon.h"
#include "protocol/dafka_codec.h"
#include "protocol/endpoint.h"

namespace zstore::bench {

namespace dafka = protocol::dafka;
namespace beacon = protocol::beacon;

namespace {

class PubOutlet : public Outlet {
 public:
  PubOutlet(zmq::context_t& context, const std::vector<std::string>& endpoints,
            const security::SocketSecurity& security)
      : socket_(context, zmq::socket_type::pub), partition_(random_address()) {
    socket_.set(zmq::sockopt::sndhwm, 0);
    socket_.set(zmq::sockopt::linger, 0);
    security.as_client(socket_);
    for (const auto& endpoint : endpoints) socket_.connect(endpoint);
  }
  void send(const protocol::Frames& frames) override { send_frames(socket_, frames); }
  const std::string& partition() const override { return partition_; }

 private:
  zmq::socket_t socket_;
  std::string partition_;  // a producer node's address: Dafka-shaped records carry it
};

// Receives one multipart message; false when none came within the poll.
bool receive_frames(zmq::socket_t& socket, std::vector<zmq::message_t>& frames) {
  frames.clear();
  zmq::message_t frame;
  if (!socket.recv(frame, zmq::recv_flags::dontwait)) return false;
  frames.push_back(std::move(frame));
  while (frames.back().more()) {
    zmq::message_t next;
    (void)socket.recv(next);
    frames.push_back(std::move(next));
  }
  return true;
}

bool poll_in(zmq::socket_t& socket, std::chrono::milliseconds timeout) {
  zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
  return zmq::poll(&item, 1, timeout) > 0;
}

}  // namespace

std::string random_address() {
  uuid_t uuid;
  uuid_generate_random(uuid);
  return dafka::make_address(uuid);
}

PubSubTransport::PubSubTransport(zmq::context_t& context, std::string write_endpoint, std::string read_endpoint,
                                 security::SocketSecurity security)
    : PubSubTransport(context, std::vector<std::string>{std::move(write_endpoint)},
                      std::vector<std::string>{std::move(read_endpoint)}, std::move(security)) {}

PubSubTransport::PubSubTransport(zmq::context_t& context, std::vector<std::string> write_endpoints,
                                 std::vector<std::string> read_endpoints, security::SocketSecurity security)
    : context_(context),
      write_endpoints_(std::move(write_endpoints)),
      read_endpoints_(std::move(read_endpoints)),
      security_(std::move(security)) {}

std::unique_ptr<Outlet> PubSubTransport::open(int) {
  return std::make_unique<PubOutlet>(context_, write_endpoints_, security_);
}

void PubSubTransport::receive(Board& board, const std::vector<std::string>&) {
  zmq::socket_t sub(context_, zmq::socket_type::sub);
  sub.set(zmq::sockopt::rcvhwm, 0);
  sub.set(zmq::sockopt::linger, 0);
  sub.set(zmq::sockopt::subscribe, "");
  security_.as_client(sub);
  for (const auto& endpoint : read_endpoints_) sub.connect(endpoint);
  std::vector<zmq::message_t> frames;
  while (!board.stop) {
    if (!poll_in(sub, std::chrono::milliseconds(50))) continue;
    while (receive_frames(sub, frames)) {
      std::int64_t sent = 0;
      std::uint32_t tag = 0;
      std::uint64_t n = 0;
      if (read_body(frames.back().to_string_view(), sent, tag, n)) board.complete_tagged(tag, n, now_ns(), sent);
    }
  }
}

BenchNode::BenchNode(zmq::context_t& context, const std::string& tower, const security::SocketSecurity& security)
    : publisher_(context, zmq::socket_type::xpub), beacon_(context, zmq::socket_type::pub), address_(random_address()) {
  if (security.curve()) {
    publisher_.set(zmq::sockopt::curve_server, 1);
    publisher_.set(zmq::sockopt::curve_secretkey, security.cert->secret_key);
    key_ = security.cert->public_key;
  }
  security.as_client(beacon_);
  publisher_.set(zmq::sockopt::sndhwm, 0);
  publisher_.set(zmq::sockopt::linger, 0);
  publisher_.set(zmq::sockopt::xpub_verbose, 1);
  publisher_.bind("tcp://127.0.0.1:*");
  std::string bound = publisher_.get(zmq::sockopt::last_endpoint);
  auto endpoint = protocol::parse_tcp_endpoint(bound);
  if (!endpoint) throw std::runtime_error("cannot read the bound endpoint '" + bound + "'");
  port_ = endpoint->port;
  beacon_.set(zmq::sockopt::linger, 0);
  beacon_.connect(tower);
}

void BenchNode::tick() {
  auto now = std::chrono::steady_clock::now();
  if (now >= next_beacon_) {
    send_frames(beacon_, beacon::encode(beacon::NodeBeacon{address_, "127.0.0.1", port_, key_}));
    next_beacon_ = now + std::chrono::seconds(1);
  }
  zmq::message_t subscription;
  while (publisher_.recv(subscription, zmq::recv_flags::dontwait)) {
    if (subscription.size() > 0 && subscription.data<char>()[0] == 1) subscribed_ = true;
  }
}

bool BenchNode::wait_subscriber(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!subscribed_ && std::chrono::steady_clock::now() < deadline) {
    tick();
    poll_in(publisher_, std::chrono::milliseconds(20));
  }
  return subscribed_;
}

namespace {

class NodeOutlet : public Outlet {
 public:
  NodeOutlet(zmq::context_t& context, const std::string& tower, const security::SocketSecurity& security)
      : node_(context, tower, security) {
    if (!node_.wait_subscriber(std::chrono::seconds(30))) {
      throw std::runtime_error("no Dafka store connected to the producer within 30 s (is the tower at " + tower +
                               " running?)");
    }
  }
  void send(const protocol::Frames& frames) override { send_frames(node_.publisher(), frames); }
  void tick() override { node_.tick(); }
  const std::string& partition() const override { return node_.address(); }

 private:
  BenchNode node_;
};

}  // namespace

DafkaTransport::DafkaTransport(zmq::context_t& context, std::string tower, std::string store,
                               security::SocketSecurity security)
    : context_(context), tower_(std::move(tower)), store_(std::move(store)), security_(std::move(security)) {}

std::unique_ptr<Outlet> DafkaTransport::open(int) { return std::make_unique<NodeOutlet>(context_, tower_, security_); }

void DafkaTransport::receive(Board& board, const std::vector<std::string>& partitions) {
  zmq::socket_t sub(context_, zmq::socket_type::sub);
  sub.set(zmq::sockopt::rcvhwm, 0);
  sub.set(zmq::sockopt::linger, 0);
  std::unordered_map<std::string, int> writer_of;
  for (std::size_t w = 0; w < partitions.size(); ++w) {
    writer_of[partitions[w]] = static_cast<int>(w);
    sub.set(zmq::sockopt::subscribe, dafka::subscription(dafka::MsgId::kAck, partitions[w]));
  }
  security_.as_client(sub);
  sub.connect(store_);
  std::vector<zmq::message_t> frames;
  std::vector<std::string_view> views;
  while (!board.stop) {
    if (!poll_in(sub, std::chrono::milliseconds(50))) continue;
    while (receive_frames(sub, frames)) {
      views.clear();
      for (const zmq::message_t& frame : frames) views.push_back(frame.to_string_view());
      auto decoded = dafka::decode(views);
      if (!decoded) continue;
      const auto* ack = std::get_if<dafka::Ack>(&*decoded);
      if (ack == nullptr) continue;
      auto found = writer_of.find(ack->topic);
      if (found != writer_of.end()) board.complete(found->second, ack->sequence, now_ns());
    }
  }
}

}  // namespace zstore::bench
