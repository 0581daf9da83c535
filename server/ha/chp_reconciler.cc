#include "server/ha/chp_reconciler.h"

#include "protocol/byte_order.h"
#include "server/ha/ha_link.h"
#include "server/reactor/zmq_frames.h"

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
                             std::uint64_t receive_budget, std::string pair_token)
    : ctx_(ctx),
      peer_chp_(std::move(peer_chp)),
      after_(after),
      limits_(limits),
      now_ms_(std::move(now_ms)),
      security_(std::move(security)),
      receive_budget_(receive_budget),
      pair_token_(std::move(pair_token)) {}

void ChpReconciler::start() {
  dealer_ = zmq::socket_t(ctx_, zmq::socket_type::dealer);
  dealer_.set(zmq::sockopt::linger, 0);
  dealer_.set(zmq::sockopt::rcvhwm, receive_hwm(receive_budget_, limits_));  // the peer waits (ROUTER)
  dealer_.set(zmq::sockopt::maxmsgsize, largest_chp_frame(limits_));
  security_.as_client(dealer_);
  if (!pair_token_.empty()) dealer_.set(zmq::sockopt::routing_id, pair_routing_id(pair_token_));
  dealer_.connect(peer_chp_);
  std::string after;
  protocol::put_be<std::uint64_t>(after, after_);
  (void)try_send(dealer_, protocol::Frames{std::string(kReconcileCommand), after});
  last_progress_ = Clock::now();
}

std::uint64_t ChpReconciler::held_size(const chp::KvMsg& kv) {
  return kv.key.size() + kv.uuid.size() + kv.properties.size() + kv.body.size() + kHeldKeyOverhead;
}

ChpReconciler::Progress ChpReconciler::fail(std::string why) {
  why_ = std::move(why);
  return Progress::kFailed;
}

ChpReconciler::Progress ChpReconciler::on_timer() {
  if (received_) return Progress::kRunning;  // step() does the rest, without the peer
  if (Clock::now() - last_progress_ > kTimeout) return fail("peer sent nothing for 5 s");
  return Progress::kRunning;
}

ChpReconciler::Progress ChpReconciler::on_socket() {
  if (received_) return Progress::kDone;
  ReceivedMessage msg;
  while (try_recv(dealer_, &msg)) {
    auto reply = chp::decode_snapshot_reply(msg.frames(), limits_);
    if (!reply) return fail("malformed reply: " + reply.error().detail);
    last_progress_ = Clock::now();
    if (auto* done = std::get_if<chp::Kthxbai>(&reply.value())) {
      peer_last_ = done->sequence;
      complete_ = done->properties.find("complete=1") != std::string::npos;
      received_ = true;
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
      held_bytes_ += held_size(kv);
      latest_.emplace(kv.key, std::move(kv));
    } else if (kv.sequence > it->second.sequence) {
      held_bytes_ += held_size(kv) - held_size(it->second);
      it->second = std::move(kv);
    }
    if (held_bytes_ > receive_budget_) {
      return fail("the peer's side of the hand-over exceeds --receive-buffer-bytes (" +
                  std::to_string(receive_budget_) + " bytes); raise it so that the peer can resync");
    }
  }
  return Progress::kRunning;
}

void ChpReconciler::note_client_write(std::string_view key) {
  if (noted_bytes_ > kMaxNotedBytes) return;  // step() fails
  if (noted_.emplace(key).second) noted_bytes_ += key.size() + kNotedKeyOverhead;
}

ChpReconciler::Progress ChpReconciler::step(storage::ChpStore& store, std::vector<storage::ChpWrite>* out) {
  if (noted_bytes_ > kMaxNotedBytes) return fail("clients wrote more than 256 MiB of keys during the hand-over");
  if (!stepping_) {
    stepping_ = true;
    own_cursor_ = store.history_updates_after(after_);
    ours_complete_ = own_cursor_ != nullptr;
    next_ = latest_.begin();
  }
  if (own_cursor_) {
    if (!read_own_updates()) return Progress::kRunning;
    storage::Status s = own_cursor_->status();
    own_cursor_.reset();
    if (!s.ok()) return fail("reading our history: " + s.message());
    return Progress::kRunning;
  }
  for (std::size_t n = 0; next_ != latest_.end() && n < kStepKeys; ++n, ++next_) {
    if (auto s = weigh(store, next_->second, out); !s.ok()) return fail("reading our map: " + s.message());
  }
  if (next_ != latest_.end()) return Progress::kRunning;
  latest_.clear();
  held_bytes_ = 0;
  ours_.clear();
  noted_.clear();
  noted_bytes_ = 0;
  return Progress::kDone;
}

// The keys a client updated (set or deleted) through us after the common
// point, with our latest such update, kStepRecords at most per call. Our
// expiries are not client updates: an expiry of a value the peer has
// overwritten since must not beat the peer's value (the value it expired
// is here if it was ours).
bool ChpReconciler::read_own_updates() {
  storage::ChpRecord r;
  for (std::size_t n = 0; n < kStepRecords; ++n) {
    if (!own_cursor_->next(&r)) return !own_cursor_->paused();
    if (r.value_omitted || !r.entry.uuid.empty() || !r.entry.value.empty()) {
      ours_[r.key] = {r.entry.sequence, r.written_ms};
    }
  }
  return false;
}

// Last writer wins: by when the updates reached the pair when both sides
// know it (their clocks agree to within the peer timeout), else by sequence.
bool ChpReconciler::peer_wins(Written peer, Written ours) {
  if (peer.ms != 0 && ours.ms != 0) return peer.ms > ours.ms;
  return peer.sequence > ours.sequence;
}

storage::Status ChpReconciler::weigh(storage::ChpStore& store, chp::KvMsg& kv, std::vector<storage::ChpWrite>* out) {
  if (noted_.contains(kv.key)) return storage::Status::Ok();  // a client's update during the hand-over: later
  storage::ChpEntry mine;
  bool found = false;
  if (auto s = store.get(kv.key, &mine, &found); !s.ok()) return s;
  // The same update (a client re-sent it after a failover): taken again
  // only when the peer published it later than we did, so that the key's
  // sequence is not below one a client of the peer saw for it.
  bool same = found && !kv.uuid.empty() && mine.uuid == kv.uuid;
  if (same && mine.sequence >= kv.sequence) return storage::Status::Ok();
  if (!found && kv.body.empty()) return storage::Status::Ok();  // already absent
  std::uint64_t expires = 0;
  std::uint64_t written = 0;
  std::string properties = chp::take_expires_at(kv.properties, &expires, &written);
  Written peer{kv.sequence, written};
  if (same) {
    // no conflict to weigh: both sides hold this update
  } else if (ours_complete_) {
    if (auto o = ours_.find(kv.key); o != ours_.end() && !peer_wins(peer, o->second)) return storage::Status::Ok();
  } else if (found && mine.sequence > after_ && !peer_wins(peer, {mine.sequence, 0})) {
    return storage::Status::Ok();
  }
  if (expires == 0) {  // a peer that sent only the ttl in seconds
    auto ttl = chp::ttl_seconds(properties, limits_);
    if (ttl.ok() && *ttl > 0) expires = now_ms_() + *ttl * 1000;
  }
  if (kv.body.empty()) expires = 0;
  // A delete without UUID here is a superseded set (on_socket() dropped
  // expiries): applied as a plain delete, without the marker.
  if (kv.body.empty() && kv.uuid.empty()) properties.clear();
  out->push_back({kv.key, std::move(kv.uuid), std::move(properties), std::move(kv.body), expires, 0, written});
  ++given_;
  return storage::Status::Ok();
}

}  // namespace zstore::server
