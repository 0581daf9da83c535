#include "tools/torture_src/chp_reader.h"

#include <zmq_addon.hpp>

#include "protocol/chp_codec.h"

namespace zstore::torture {

namespace chp = protocol::chp;

namespace {

// A server may expire a key at most this much before the ttl measured from
// our send time (its clock is ours; the ttl is rounded to whole ms).
constexpr std::int64_t kEarlyExpiryToleranceMs = 50;

std::string seq_text(std::uint64_t seq) { return std::to_string(seq); }

}  // namespace

ChpReader::ChpReader(zmq::context_t& ctx, std::vector<std::string> publishers, const ChpHistory& history,
                     Violations& violations, bool ha, Divergence divergence)
    : ctx_(ctx),
      publishers_(std::move(publishers)),
      history_(history),
      violations_(violations),
      ha_(ha),
      divergence_(divergence),
      max_by_publisher_(publishers_.size(), 0) {
  thread_ = std::thread([this] { run(); });
}

ChpReader::~ChpReader() {
  stop_ = true;
  thread_.join();
}

std::map<std::string, SeenState> ChpReader::seen() const {
  std::lock_guard lock(mu_);
  return seen_;
}

std::uint64_t ChpReader::max_sequence() const {
  std::lock_guard lock(mu_);
  return max_sequence_;
}

void ChpReader::run() {
  std::vector<zmq::socket_t> subs;  // one per publisher: the order is checked per server
  std::vector<zmq::pollitem_t> items;
  for (const auto& ep : publishers_) {
    subs.emplace_back(ctx_, zmq::socket_type::sub);
    subs.back().set(zmq::sockopt::linger, 0);
    subs.back().set(zmq::sockopt::rcvhwm, 0);
    subs.back().set(zmq::sockopt::reconnect_ivl, 20);
    subs.back().set(zmq::sockopt::subscribe, "");
    subs.back().connect(ep);
  }
  for (auto& sub : subs) items.push_back({sub.handle(), 0, ZMQ_POLLIN, 0});
  while (!stop_) {
    if (zmq::poll(items.data(), items.size(), std::chrono::milliseconds(100)) <= 0) continue;
    for (std::size_t i = 0; i < subs.size(); ++i) {
      if (!(items[i].revents & ZMQ_POLLIN)) continue;
      std::vector<zmq::message_t> parts;
      if (!zmq::recv_multipart(subs[i], std::back_inserter(parts))) continue;
      std::vector<std::string_view> views;
      for (const auto& p : parts) views.emplace_back(static_cast<const char*>(p.data()), p.size());
      auto update = chp::decode_update(views);
      if (!update) {
        violations_.add("bad KVPUB", "undecodable publisher message: " + update.error().detail);
        continue;
      }
      if (auto* kv = std::get_if<chp::KvMsg>(&update.value())) on_kvpub(i, kv->key, kv->sequence, kv->uuid, kv->body);
    }
  }
}

void ChpReader::on_kvpub(std::size_t from, const std::string& key, std::uint64_t seq, const std::string& uuid,
                         const std::string& body) {
  kvpubs_++;
  std::int64_t now = now_ms();
  std::lock_guard lock(mu_);
  std::uint64_t& floor = divergence_ == Divergence::kPartition ? max_by_publisher_[from] : max_sequence_;
  if (seq <= floor) {
    violations_.add("sequence went back", "KVPUB " + key + " seq " + seq_text(seq) + " after seq " + seq_text(floor));
  }
  floor = std::max(floor, seq);
  max_sequence_ = std::max(max_sequence_, seq);
  if (unchecked_key(key)) return;
  SeenState& state = seen_[key];
  if (uuid.empty() && body.empty()) return on_expiry(key, seq, state, now);
  auto ref = history_.find(uuid);
  if (!ref || ref->key != key) {
    violations_.add("unknown KVPUB", "KVPUB " + key + " seq " + seq_text(seq) + " carries no op sent for that key");
    return;
  }
  auto op = history_.op(*ref);
  if (op->value != body) violations_.add("corrupt KVPUB", "KVPUB " + key + " body differs from the op sent");
  if (state.op && ref->index < *state.op && ha_) {
    republished_++;  // the newer op stays what the key must end up with
    return;
  }
  if (state.op && ref->index < *state.op) {
    violations_.add("reordered KVPUB",
                    key + " op #" + std::to_string(ref->index) + " published after op #" + std::to_string(*state.op));
  }
  state = SeenState{seq, ref->index, false, now};
}

// A server-side expiry: some op of the key at or after the last seen one
// must have a ttl that has run out by now. With divergent maps, a server
// may expire its own, older copy of a key: any op of the key will do, and
// the key counts as expired only when its last seen op's ttl has run out
// (the snapshot check still requires the latest op, or its expiry); an op
// never seen published is never taken as the one expired.
void ChpReader::on_expiry(const std::string& key, std::uint64_t seq, SeenState& state, std::int64_t now) {
  std::optional<std::size_t> expired;
  bool divergent = divergence_ != Divergence::kNone;
  std::size_t first = divergent ? 0 : state.op.value_or(0);
  history_.visit([&](const KeyOps& all) {
    auto it = all.find(key);
    if (it == all.end()) return;
    for (std::size_t i = first; i < it->second.size(); ++i) {
      const ChpOp& op = it->second[i];
      if (op.ttl_s && op.expires_ms() - kEarlyExpiryToleranceMs <= now) expired = i;
    }
  });
  if (!expired) {
    violations_.add("premature expiry",
                    "server deleted " + key + " (seq " + seq_text(seq) + ") before any ttl of it could have run out");
  }
  if (divergent && expired && state.op && *expired != *state.op) {
    // Another copy's expiry: an older op a stale member held, or an op
    // after the last one seen that no server published while we listened
    // (e.g. sent while both members were down). Neither changes what the
    // key must end up with, unless the last seen op itself has run out.
    bool last_ran_out = false;
    history_.visit([&](const KeyOps& all) {
      const ChpOp& op = all.at(key)[*state.op];
      last_ran_out = op.ttl_s && op.expires_ms() - kEarlyExpiryToleranceMs <= now;
    });
    if (!last_ran_out) return;
    expired = state.op;
  }
  std::int64_t op_seen = expired && expired == state.op && !state.expired ? state.op_seen_ms : 0;
  state = SeenState{seq, expired ? expired : state.op, true, op_seen};
}

}  // namespace zstore::torture
