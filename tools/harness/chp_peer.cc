#include "protocol/byte_order.h"
#include "tools/harness/chp_peer.h"

#include <algorithm>

#include <uuid/uuid.h>

#include <zmq_addon.hpp>

namespace zstore::testing {

namespace chp = protocol::chp;
using Clock = std::chrono::steady_clock;

namespace {

// False when the socket could not take a frame within its send time-out
// (a DEALER without a connection).
bool send_frames(zmq::socket_t& s, const protocol::Frames& frames) {
  for (std::size_t i = 0; i < frames.size(); ++i) {
    auto flags = i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
    if (!s.send(zmq::buffer(frames[i]), flags)) return false;
  }
  return true;
}

// Receives one multipart message within timeout.
std::optional<std::vector<zmq::message_t>> recv_within(zmq::socket_t& s, std::chrono::milliseconds timeout) {
  zmq::pollitem_t item{s.handle(), 0, ZMQ_POLLIN, 0};
  // A deadline already past polls once: a negative time-out would block for ever.
  if (zmq::poll(&item, 1, std::max(timeout, std::chrono::milliseconds(0))) <= 0) return std::nullopt;
  std::vector<zmq::message_t> parts;
  if (!zmq::recv_multipart(s, std::back_inserter(parts))) return std::nullopt;
  return parts;
}

std::vector<std::string_view> views(const std::vector<zmq::message_t>& parts) {
  std::vector<std::string_view> v;
  for (const auto& p : parts) v.emplace_back(static_cast<const char*>(p.data()), p.size());
  return v;
}

std::chrono::milliseconds left(Clock::time_point deadline) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return std::max(ms, std::chrono::milliseconds(0));
}

}  // namespace

ChpPeer::ChpPeer(zmq::context_t& ctx, const std::string& host, std::uint16_t port,
                 const security::SocketSecurity& security)
    : dealer_(ctx, zmq::socket_type::dealer), sub_(ctx, zmq::socket_type::sub), pub_(ctx, zmq::socket_type::pub) {
  for (auto* s : {&dealer_, &sub_, &pub_}) {
    s->set(zmq::sockopt::linger, 0);
    security.as_client(*s);
  }
  sub_.set(zmq::sockopt::subscribe, "");
  sub_.set(zmq::sockopt::rcvhwm, 0);
  pub_.set(zmq::sockopt::sndhwm, 0);
  dealer_.connect(host + ":" + std::to_string(port));
  sub_.connect(host + ":" + std::to_string(port + 1));
  pub_.connect(host + ":" + std::to_string(port + 2));
}

void ChpPeer::send_collector(const protocol::Frames& frames) { send_frames(pub_, frames); }
void ChpPeer::send_snapshot_port(const protocol::Frames& frames) { send_frames(dealer_, frames); }

std::string ChpPeer::set(const std::string& key, const std::string& value, const std::string& properties) {
  uuid_t u;
  uuid_generate(u);
  std::string uuid(reinterpret_cast<const char*>(u), sizeof u);
  send_collector(chp::encode_kvmsg({key, 0, uuid, properties, value}));
  return uuid;
}

std::optional<ChpSnapshot> ChpPeer::snapshot(const std::string& subtree, std::chrono::milliseconds timeout) {
  return ask(chp::encode_icanhaz({subtree, std::nullopt}), timeout);
}

std::optional<ChpSnapshot> ChpPeer::resume(const std::string& subtree, std::uint64_t after,
                                           std::chrono::milliseconds timeout) {
  return ask(chp::encode_icanhaz({subtree, after}), timeout);
}

std::optional<ChpSnapshot> ChpPeer::catch_up(std::uint64_t after, std::chrono::milliseconds timeout) {
  std::string be;
  protocol::put_be<std::uint64_t>(be, after);
  return ask(protocol::Frames{std::string(chp::kPeerCatchup), be}, timeout);
}

std::optional<ChpSnapshot> ChpPeer::peer_snapshot(std::chrono::milliseconds timeout) {
  return ask(protocol::Frames{std::string(chp::kPeerSnapshot), ""}, timeout);
}

// A DEALER without a connection (none yet, or refused) blocks a send: the
// request must go within the time-out too, or there is no answer. A
// time-out already past (a caller's deadline computed late) tries once:
// libzmq refuses an SNDTIMEO below -1 with EINVAL.
std::optional<ChpSnapshot> ChpPeer::ask(const protocol::Frames& request, std::chrono::milliseconds timeout) {
  timeout = std::max(timeout, std::chrono::milliseconds(0));
  auto deadline = Clock::now() + timeout;
  dealer_.set(zmq::sockopt::sndtimeo, static_cast<int>(timeout.count()));
  bool sent = send_frames(dealer_, request);
  dealer_.set(zmq::sockopt::sndtimeo, -1);  // send_snapshot_port blocks, as before
  if (!sent) return std::nullopt;
  return collect_snapshot(left(deadline));
}

std::optional<ChpSnapshot> ChpPeer::collect_snapshot(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  ChpSnapshot snap;
  while (true) {
    auto parts = recv_within(dealer_, left(deadline));
    if (!parts) return std::nullopt;
    auto v = views(*parts);
    auto reply = chp::decode_snapshot_reply(v);
    if (!reply) return std::nullopt;
    if (auto* done = std::get_if<chp::Kthxbai>(&reply.value())) {
      snap.sequence = done->sequence;
      snap.subtree = done->subtree;
      snap.properties = done->properties;
      return snap;
    }
    auto& kv = std::get<chp::KvMsg>(reply.value());
    snap.entries[kv.key] = kv;
    snap.in_order.push_back(kv);
  }
}

std::optional<chp::Update> ChpPeer::next_update(std::chrono::milliseconds timeout) {
  auto parts = recv_within(sub_, timeout);
  if (!parts) return std::nullopt;
  auto v = views(*parts);
  auto update = chp::decode_update(v);
  if (!update) return std::nullopt;
  return std::move(update).value();
}

std::optional<chp::KvMsg> ChpPeer::wait_kvpub(const std::string& key, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    auto u = next_update(left(deadline));
    if (!u) return std::nullopt;
    if (auto* kv = std::get_if<chp::KvMsg>(&*u); kv && kv->key == key) return *kv;
  }
  return std::nullopt;
}

bool ChpPeer::wait_connected(std::chrono::milliseconds timeout) {
  const std::string probe = "__zstore_test_probe";
  auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    std::string uuid = set(probe, "1");
    auto round = std::min(deadline, Clock::now() + std::chrono::milliseconds(200));
    // Only this probe's KVPUB proves both paths: an older one queued before
    // a reconnect, or another peer's, does not.
    while (auto kv = wait_kvpub(probe, left(round))) {
      if (kv->uuid == uuid) return true;
    }
  }
  return false;
}

}  // namespace zstore::testing
