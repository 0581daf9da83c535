#include "tests/client/dafka_fake_peers.h"

#include <uuid/uuid.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "protocol/beacon.h"
#include "protocol/dafka_codec.h"
#include "protocol/endpoint.h"
#include "tests/support/test_support.h"

namespace zstore::testing {

namespace wire = protocol::dafka;
namespace beacon = protocol::beacon;
using std::chrono::milliseconds;
using Parts = std::vector<zmq::message_t>;

namespace {

std::vector<std::string_view> views(const Parts& parts) {
  std::vector<std::string_view> out;
  for (const auto& p : parts) out.emplace_back(static_cast<const char*>(p.data()), p.size());
  return out;
}

void send_frames(zmq::socket_t& s, const protocol::Frames& frames) {
  for (std::size_t i = 0; i < frames.size(); ++i)
    s.send(zmq::buffer(frames[i]), i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
}

bool recv(zmq::socket_t& s, Parts& parts) {
  parts.clear();
  return zmq::recv_multipart(s, std::back_inserter(parts), zmq::recv_flags::dontwait).has_value();
}

}  // namespace

// --- FakeTower ---

FakeTower::FakeTower() : port_(free_port_range(2)) {
  thread_ = std::thread([this] { run(); });
}

FakeTower::~FakeTower() {
  stop_ = true;
  thread_.join();
}

std::string FakeTower::endpoint() const { return "tcp://127.0.0.1:" + std::to_string(port_); }

void FakeTower::run() {
  zmq::context_t ctx(1);
  zmq::socket_t xsub(ctx, zmq::socket_type::xsub), xpub(ctx, zmq::socket_type::xpub);
  xsub.set(zmq::sockopt::linger, 0);
  xpub.set(zmq::sockopt::linger, 0);
  xpub.set(zmq::sockopt::xpub_verbose, 1);
  xsub.bind("tcp://127.0.0.1:" + std::to_string(port_));
  xpub.bind("tcp://127.0.0.1:" + std::to_string(port_ + 1));
  std::string sub_b =
      "\x01"
      "B";
  xsub.send(zmq::buffer(sub_b));
  Parts parts;
  while (!stop_) {
    zmq::pollitem_t items[] = {{xsub.handle(), 0, ZMQ_POLLIN, 0}, {xpub.handle(), 0, ZMQ_POLLIN, 0}};
    zmq::poll(items, 2, milliseconds(10));
    while (recv(xpub, parts)) {
      auto s = parts[0].to_string();
      if (s.size() < 2) continue;
      if (s.substr(1) == "W") {
        if (s[0] == 1) send_frames(xpub, beacon::encode_welcome());
        continue;
      }
      xsub.send(zmq::buffer(s));
    }
    while (recv(xsub, parts)) {
      auto b = beacon::decode_node_beacon(views(parts));
      if (!b) continue;
      ++beacons_;
      std::string host = b->host.empty() ? "127.0.0.1" : b->host;
      send_frames(xpub, beacon::encode(beacon::TowerBeacon{b->uuid, beacon::tower_endpoint(host, b->port)}));
    }
  }
}

// --- FakeStore ---

FakeStore::FakeStore(const std::string& tower, bool auto_store, bool discover)
    : tower_(tower), auto_(auto_store), discover_(discover) {
  uuid_t uuid;
  uuid_generate_random(uuid);
  address_ = wire::make_address(uuid);
  thread_ = std::thread([this] { run(); });
}

FakeStore::~FakeStore() {
  stop_ = true;
  thread_.join();
}

void FakeStore::connect(const std::string& endpoint) {
  std::lock_guard lock(mu_);
  connects_.push_back(endpoint);
}

void FakeStore::send(const wire::Message& msg) {
  std::lock_guard lock(mu_);
  outbox_.push_back(msg);
}

std::vector<wire::Message> FakeStore::received() const {
  std::lock_guard lock(mu_);
  return received_;
}

std::vector<std::string> FakeStore::stored(const std::string& partition) const {
  std::lock_guard lock(mu_);
  auto it = stored_.find(partition);
  return it == stored_.end() ? std::vector<std::string>{} : it->second;
}

std::map<std::string, std::vector<std::string>> FakeStore::stored_all() const {
  std::lock_guard lock(mu_);
  return stored_;
}

bool FakeStore::has_subscription(const std::string& topic) const {
  std::lock_guard lock(mu_);
  return std::find(subscriptions_.begin(), subscriptions_.end(), topic) != subscriptions_.end();
}

void FakeStore::run() {
  zmq::context_t ctx(1);
  zmq::socket_t xpub(ctx, zmq::socket_type::xpub), sub(ctx, zmq::socket_type::sub),
      beacon_pub(ctx, zmq::socket_type::pub), beacon_sub(ctx, zmq::socket_type::sub);
  for (auto* s : {&xpub, &sub, &beacon_pub, &beacon_sub}) s->set(zmq::sockopt::linger, 0);
  xpub.set(zmq::sockopt::xpub_verbose, 1);
  xpub.bind("tcp://127.0.0.1:*");
  std::string ep = xpub.get(zmq::sockopt::last_endpoint);
  auto port = protocol::parse_tcp_endpoint(ep).value().port;
  for (const char* s : {"M", "H", "F", "G"}) sub.set(zmq::sockopt::subscribe, s);
  sub.set(zmq::sockopt::subscribe, wire::subscription(wire::MsgId::kDirectRecord, address_));
  sub.set(zmq::sockopt::subscribe, wire::subscription(wire::MsgId::kConsumerHello, address_));
  beacon_pub.connect(tower_);
  std::set<std::string> discovered;
  if (discover_) {
    auto tower = protocol::parse_tcp_endpoint(tower_).value();
    beacon_sub.set(zmq::sockopt::subscribe, "B");
    beacon_sub.connect(protocol::tcp_endpoint(tower.host, static_cast<std::uint16_t>(tower.port + 1)));
  }

  auto next_beacon = std::chrono::steady_clock::now();
  Parts parts;
  while (!stop_) {
    auto now = std::chrono::steady_clock::now();
    if (now >= next_beacon) {
      send_frames(beacon_pub, beacon::encode(beacon::NodeBeacon{address_, "127.0.0.1", port}));
      next_beacon = now + milliseconds(100);
    }
    std::vector<wire::Message> out;
    {
      std::lock_guard lock(mu_);
      for (auto& c : connects_) sub.connect(c);
      connects_.clear();
      out.swap(outbox_);
    }
    for (auto& m : out) send_frames(xpub, wire::encode(m));
    zmq::pollitem_t items[] = {{xpub.handle(), 0, ZMQ_POLLIN, 0}, {sub.handle(), 0, ZMQ_POLLIN, 0}};
    zmq::poll(items, 2, milliseconds(10));
    while (recv(beacon_sub, parts)) {
      auto b = beacon::decode_tower_beacon(views(parts));
      if (b && b->uuid != address_ && discovered.insert(b->endpoint).second) sub.connect(b->endpoint);
    }
    while (recv(xpub, parts)) {
      auto s = parts[0].to_string();
      if (s.size() > 1 && s[0] == 1) {
        std::lock_guard lock(mu_);
        subscriptions_.push_back(s.substr(1));
      }
      if (s.size() > 1 && s[0] == 1 && s[1] == 'L')
        send_frames(xpub, wire::encode(wire::StoreHello{s.substr(2), address_}));
    }
    while (recv(sub, parts)) {
      auto decoded = wire::decode(views(parts));
      if (!decoded) continue;
      std::vector<wire::Message> replies;
      {
        std::lock_guard lock(mu_);
        received_.push_back(decoded.value());
        if (auto_) handle(decoded.value(), replies);
      }
      for (auto& m : replies) send_frames(xpub, wire::encode(m));
    }
  }
}

// Reference store behaviour, one partition per producer (mu_ held).
void FakeStore::handle(const wire::Message& msg, std::vector<wire::Message>& out) {
  auto on_record = [&](const std::string& subject, const std::string& partition, std::uint64_t seq,
                       const std::string& content) {
    auto& v = stored_[partition];
    if (seq == v.size()) {
      v.push_back(content);
      out.push_back(wire::Ack{partition, subject, seq});
    } else if (seq > v.size()) {
      out.push_back(
          wire::Fetch{partition, address_, subject, v.size(), static_cast<std::uint32_t>(seq - v.size() + 1)});
    }
  };
  if (auto* r = std::get_if<wire::Record>(&msg)) {
    on_record(r->subject, r->partition, r->sequence, r->content);
  } else if (auto* d = std::get_if<wire::DirectRecord>(&msg)) {
    if (d->topic == address_) on_record(d->subject, d->partition, d->sequence, d->content);
  } else if (auto* h = std::get_if<wire::Head>(&msg)) {
    auto& v = stored_[h->partition];
    if (h->sequence >= v.size())
      out.push_back(wire::Fetch{h->partition, address_, h->subject, v.size(),
                                static_cast<std::uint32_t>(h->sequence - v.size() + 1)});
  } else if (auto* f = std::get_if<wire::Fetch>(&msg)) {
    if (f->address == address_) return;
    auto it = stored_.find(f->topic);
    if (it == stored_.end()) return;
    for (std::uint64_t s = f->sequence; s < it->second.size() && s < f->sequence + f->count; ++s)
      out.push_back(wire::DirectRecord{f->address, f->topic, f->subject, s, it->second[s]});
  } else if (auto* g = std::get_if<wire::GetHeads>(&msg)) {
    for (auto& [partition, v] : stored_)
      if (!v.empty()) out.push_back(wire::DirectHead{g->address, partition, g->topic, v.size() - 1});
  }
}

}  // namespace zstore::testing
