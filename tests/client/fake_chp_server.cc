#include "tests/client/fake_chp_server.h"

#include <zmq_addon.hpp>

#include "tests/support/test_support.h"

namespace zstore::testing {

namespace chp = protocol::chp;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kHugzInterval{20};

void send_frames(zmq::socket_t& s, const protocol::Frames& frames) {
  for (std::size_t i = 0; i < frames.size(); ++i) {
    s.send(zmq::buffer(frames[i]), i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
}

protocol::Frames to_frames(const std::vector<zmq::message_t>& parts, std::size_t from) {
  protocol::Frames out;
  for (std::size_t i = from; i < parts.size(); ++i) out.push_back(parts[i].to_string());
  return out;
}

std::vector<std::string_view> views(const protocol::Frames& frames) { return {frames.begin(), frames.end()}; }

}  // namespace

FakeChpServer::FakeChpServer(zmq::context_t& ctx)
    : port_(free_port_range(3)),
      router_(ctx, zmq::socket_type::router),
      pub_(ctx, zmq::socket_type::pub),
      sub_(ctx, zmq::socket_type::sub) {
  for (auto* s : {&router_, &pub_, &sub_}) s->set(zmq::sockopt::linger, 0);
  pub_.set(zmq::sockopt::sndhwm, 0);
  router_.set(zmq::sockopt::router_mandatory, 1);
  sub_.set(zmq::sockopt::subscribe, "");
  const std::string base = "tcp://127.0.0.1:";
  router_.bind(base + std::to_string(port_));
  pub_.bind(base + std::to_string(port_ + 1));
  sub_.bind(base + std::to_string(port_ + 2));
  thread_ = std::thread([this] { loop(); });
}

FakeChpServer::~FakeChpServer() {
  stop_ = true;
  thread_.join();
}

std::string FakeChpServer::endpoint() const { return "tcp://127.0.0.1:" + std::to_string(port_); }

void FakeChpServer::set_request_hook(RequestHook hook) {
  std::lock_guard lock(mu_);
  hook_ = std::move(hook);
}

std::uint64_t FakeChpServer::store(const std::string& key, const std::string& value, const std::string& properties,
                                   const std::string& uuid) {
  std::lock_guard lock(mu_);
  chp::KvMsg msg{key, ++sequence_, uuid, properties, value};
  if (value.empty()) {
    map_.erase(key);
  } else {
    map_[key] = msg;
  }
  commands_.push_back([frames = chp::encode_kvmsg(msg)](FakeChpServer& s) { s.publish_now(frames); });
  return msg.sequence;
}

void FakeChpServer::reset_map(const std::map<std::string, std::string>& entries, std::uint64_t sequence) {
  std::lock_guard lock(mu_);
  map_.clear();
  for (const auto& [key, value] : entries) map_[key] = chp::KvMsg{key, sequence, "", "", value};
  sequence_ = sequence;
}

void FakeChpServer::publish(protocol::Frames frames) {
  run_on_server([frames = std::move(frames)](FakeChpServer& s) { s.publish_now(frames); });
}

void FakeChpServer::run_on_server(std::function<void(FakeChpServer&)> fn) {
  std::lock_guard lock(mu_);
  commands_.push_back(std::move(fn));
}

std::uint64_t FakeChpServer::sequence() const {
  std::lock_guard lock(mu_);
  return sequence_;
}

std::vector<protocol::Frames> FakeChpServer::kvsets() const {
  std::lock_guard lock(mu_);
  return kvsets_;
}

std::vector<std::string> FakeChpServer::request_subtrees() const {
  std::lock_guard lock(mu_);
  return subtrees_;
}

void FakeChpServer::answer(const std::string& identity, const std::string& subtree) {
  std::vector<protocol::Frames> replies;
  {
    std::lock_guard lock(mu_);
    for (const auto& [key, msg] : map_) {
      if (key.starts_with(subtree)) replies.push_back(chp::encode_kvmsg(msg));
    }
    replies.push_back(chp::encode_kthxbai({sequence_, subtree, {}}));
  }
  for (const auto& r : replies) {
    if (!send_to(identity, r)) return;
  }
}

bool FakeChpServer::send_to(const std::string& identity, const protocol::Frames& frames) {
  protocol::Frames routed{identity};
  routed.insert(routed.end(), frames.begin(), frames.end());
  try {
    send_frames(router_, routed);
    return true;
  } catch (const zmq::error_t&) {
    return false;  // EHOSTUNREACH: that client is gone
  }
}

void FakeChpServer::publish_now(const protocol::Frames& frames) { send_frames(pub_, frames); }

void FakeChpServer::loop() {
  while (!stop_) {
    zmq::pollitem_t items[] = {{router_.handle(), 0, ZMQ_POLLIN, 0}, {sub_.handle(), 0, ZMQ_POLLIN, 0}};
    zmq::poll(items, 2, milliseconds(5));
    if (items[0].revents & ZMQ_POLLIN) on_request();
    if (items[1].revents & ZMQ_POLLIN) on_kvset();
    run_commands();
    heartbeat();
  }
}

void FakeChpServer::on_request() {
  std::vector<zmq::message_t> parts;
  if (!zmq::recv_multipart(router_, std::back_inserter(parts), zmq::recv_flags::dontwait)) return;
  if (parts.size() < 2) return;
  protocol::Frames frames = to_frames(parts, 1);
  auto v = views(frames);
  auto request = chp::decode_icanhaz(v);
  if (!request) return;
  const int number = ++requests_;
  RequestHook hook;
  {
    std::lock_guard lock(mu_);
    subtrees_.push_back(request->subtree);
    hook = hook_;
  }
  const std::string identity = parts[0].to_string();
  if (hook) {
    hook(*this, identity, request->subtree, number);
  } else {
    answer(identity, request->subtree);
  }
}

void FakeChpServer::on_kvset() {
  std::vector<zmq::message_t> parts;
  if (!zmq::recv_multipart(sub_, std::back_inserter(parts), zmq::recv_flags::dontwait)) return;
  protocol::Frames frames = to_frames(parts, 0);
  {
    std::lock_guard lock(mu_);
    kvsets_.push_back(frames);
  }
  if (!echo_) return;
  auto v = views(frames);
  auto kvset = chp::decode_kvset(v);
  if (kvset) store(kvset->key, kvset->body, kvset->properties, kvset->uuid);
}

void FakeChpServer::run_commands() {
  std::deque<std::function<void(FakeChpServer&)>> todo;
  {
    std::lock_guard lock(mu_);
    todo.swap(commands_);
  }
  for (auto& fn : todo) fn(*this);
}

void FakeChpServer::heartbeat() {
  auto now = std::chrono::steady_clock::now();
  if (!heartbeat_ || now - last_hugz_ < kHugzInterval) return;
  last_hugz_ = now;
  publish_now(chp::encode_hugz({0}));
}

}  // namespace zstore::testing
