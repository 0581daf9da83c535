#include "server/chp_reconciler.h"

#include "protocol/byte_order.h"
#include "server/zmq_frames.h"

namespace zstore::server {

namespace chp = protocol::chp;

namespace {
constexpr auto kTimeout = std::chrono::seconds(5);
constexpr std::size_t kMaxKeys = 4'000'000;  // bounds memory: a bigger hand-over fails and is retried

bool superseded(std::string_view properties) {
  auto parsed = chp::parse_properties(properties);
  if (!parsed) return false;
  for (const auto& [name, value] : parsed.value()) {
    if (name == chp::kSupersededProperty && value == "1") return true;
  }
  return false;
}
}  // namespace

ChpReconciler::ChpReconciler(zmq::context_t& ctx, std::string peer_chp, std::uint64_t after, chp::Limits limits,
                             std::function<std::uint64_t()> now_ms, security::SocketSecurity security,
                             std::uint64_t receive_budget)
    : ctx_(ctx), peer_chp_(std::move(peer_chp)), after_(after), limits_(limits), now_ms_(std::move(now_ms)),
      security_(std::move(security)), receive_budget_(receive_budget) {}

void ChpReconciler::start() {
  dealer_ = zmq::socket_t(ctx_, zmq::socket_type::dealer);
  dealer_.set(zmq::sockopt::linger, 0);
  dealer_.set(zmq::sockopt::rcvhwm, receive_hwm(receive_budget_, limits_));  // the peer waits (ROUTER)
  dealer_.set(zmq::sockopt::maxmsgsize, largest_chp_frame(limits_));
  security_.as_client(dealer_);
  dealer_.connect(peer_chp_);
  std::string after;
  protocol::put_be<std::uint64_t>(after, after_);
  (void)try_send(dealer_, protocol::Frames{std::string(kReconcileCommand), after});
  last_progress_ = Clock::now();
}

ChpReconciler::Progress ChpReconciler::fail(std::string why) {
  why_ = std::move(why);
  return Progress::kFailed;
}

ChpReconciler::Progress ChpReconciler::on_timer() {
  if (Clock::now() - last_progress_ > kTimeout) return fail("peer sent nothing for 5 s");
  return Progress::kRunning;
}

ChpReconciler::Progress ChpReconciler::on_socket() {
  ReceivedMessage msg;
  while (try_recv(dealer_, &msg)) {
    auto reply = chp::decode_snapshot_reply(msg.frames(), limits_);
    if (!reply) return fail("malformed reply: " + reply.error().detail);
    last_progress_ = Clock::now();
    if (auto* done = std::get_if<chp::Kthxbai>(&reply.value())) {
      peer_last_ = done->sequence;
      complete_ = done->properties.find("complete=1") != std::string::npos;
      return Progress::kDone;
    }
    auto& kv = std::get<chp::KvMsg>(reply.value());
    if (kv.sequence <= after_) continue;  // a whole map (complete=0): only what came after
    // An expiry (a delete without UUID) is not handed over: we expire the
    // keys we hold ourselves, at their own absolute time, and a newer value
    // we hold must not be deleted by the peer's expiry of an older one.
    // A superseded set (chp_codec.h kSupersededProperty) is a client's
    // write: it is weighed, and applied as a delete without UUID.
    if (kv.uuid.empty() && kv.body.empty() && !superseded(kv.properties)) continue;
    auto it = latest_.find(kv.key);
    if (it == latest_.end()) {
      if (latest_.size() >= kMaxKeys) return fail("more than 4M keys to hand over");
      latest_.emplace(kv.key, std::move(kv));
    } else if (kv.sequence > it->second.sequence) {
      it->second = std::move(kv);
    }
  }
  return Progress::kRunning;
}

// The keys a client updated (set or deleted) through us after the common
// point, with our latest such update. Our expiries are not client updates:
// an expiry of a value the peer has overwritten since must not beat the
// peer's value (the value it expired is here if it was ours). *complete:
// whether our history reached back to the common point.
storage::Status ChpReconciler::own_updates(storage::ChpStore& store, std::map<std::string, Written>* out,
                                           bool* complete) {
  auto cursor = store.history_updates_after(after_);
  *complete = cursor != nullptr;
  if (!cursor) return storage::Status::Ok();
  storage::ChpRecord r;
  while (cursor->next(&r) || cursor->paused()) {
    if (cursor->paused()) continue;
    if (r.value_omitted || !r.entry.uuid.empty() || !r.entry.value.empty()) {
      (*out)[r.key] = {r.entry.sequence, r.written_ms};
    }
  }
  return cursor->status();
}

// Last writer wins: by when the updates reached the pair when both sides
// know it (their clocks agree to within the peer timeout), else by sequence.
bool ChpReconciler::peer_wins(Written peer, Written ours) {
  if (peer.ms != 0 && ours.ms != 0) return peer.ms > ours.ms;
  return peer.sequence > ours.sequence;
}

storage::Status ChpReconciler::result(storage::ChpStore& store, std::vector<storage::ChpWrite>* out) {
  std::map<std::string, Written> ours;
  bool complete = false;
  if (auto s = own_updates(store, &ours, &complete); !s.ok()) return s;
  for (auto& [key, kv] : latest_) {
    storage::ChpEntry mine;
    bool found = false;
    if (auto s = store.get(key, &mine, &found); !s.ok()) return s;
    // The same update (a client re-sent it after a failover): taken again
    // only when the peer published it later than we did, so that the key's
    // sequence is not below one a client of the peer saw for it.
    bool same = found && !kv.uuid.empty() && mine.uuid == kv.uuid;
    if (same && mine.sequence >= kv.sequence) continue;
    if (!found && kv.body.empty()) continue;  // already absent
    std::uint64_t expires = 0;
    std::uint64_t written = 0;
    std::string properties = chp::take_expires_at(kv.properties, &expires, &written);
    Written peer{kv.sequence, written};
    if (same) {
      // no conflict to weigh: both sides hold this update
    } else if (complete) {
      if (auto o = ours.find(key); o != ours.end() && !peer_wins(peer, o->second)) continue;
    } else if (found && mine.sequence > after_ && !peer_wins(peer, {mine.sequence, 0})) {
      continue;
    }
    if (expires == 0) {  // a peer that sent only the ttl in seconds
      auto ttl = chp::ttl_seconds(properties, limits_);
      if (ttl.ok() && *ttl > 0) expires = now_ms_() + *ttl * 1000;
    }
    if (kv.body.empty()) expires = 0;
    // A delete without UUID here is a superseded set (on_socket() dropped
    // expiries): applied as a plain delete, without the marker.
    if (kv.body.empty() && kv.uuid.empty()) properties.clear();
    out->push_back({key, std::move(kv.uuid), std::move(properties), std::move(kv.body), expires, 0, written});
  }
  latest_.clear();
  return storage::Status::Ok();
}

}  // namespace zstore::server
