#include "server/ha/chp_follower.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "protocol/byte_order.h"
#include "protocol/endpoint.h"
#include "server/ha/ha_link.h"
#include "server/reactor/zmq_frames.h"

namespace zstore::server {

namespace chp = protocol::chp;

ChpFollower::ChpFollower(zmq::context_t& ctx, storage::ChpStore& store, PendingList& pending, std::string leader,
                         chp::Limits limits, std::function<std::uint64_t()> now_ms, security::SocketSecurity security,
                         std::uint64_t receive_budget, std::string pair_token)
    : ctx_(ctx),
      store_(store),
      pending_(pending),
      leader_(std::move(leader)),
      pair_token_(std::move(pair_token)),
      limits_(limits),
      now_ms_(std::move(now_ms)),
      security_(std::move(security)),
      receive_budget_(receive_budget) {}

void ChpFollower::as_replica(Replica replica) {
  replica_ = std::move(replica);
  upstream_ = 0;
  leader_ = replica_->upstreams.at(0);
}

void ChpFollower::start() {
  connect_updates();
  if (replica_ && store_.synced() && store_.last_sequence() != 0) return request_catchup("resuming after our start");
  request_snapshot();
}

void ChpFollower::connect_updates() {
  // The leader's publisher at P+1; --ha-peer-chp leaves room for it (options_checks.cc).
  std::string publisher = protocol::tcp_endpoint_at_offset(leader_, 1).value();
  sub_ = zmq::socket_t(ctx_, zmq::socket_type::sub);
  sub_.set(zmq::sockopt::linger, 0);
  sub_.set(zmq::sockopt::rcvhwm, receive_hwm(receive_budget_, limits_));
  sub_.set(zmq::sockopt::maxmsgsize, largest_chp_frame(limits_));
  if (gapped()) {
    sub_.set(zmq::sockopt::subscribe, replica_->subtree);
    sub_.set(zmq::sockopt::subscribe, std::string(chp::kHugz));
  } else {
    sub_.set(zmq::sockopt::subscribe, "");
  }
  security_.as_client(sub_);
  sub_.connect(publisher);
}

// A replica's move to the next upstream of its list (the same one again
// when it has one): fresh sockets, so nothing stale is read.
void ChpFollower::next_upstream(const std::string& why) {
  upstream_ = (upstream_ + 1) % replica_->upstreams.size();
  leader_ = replica_->upstreams[upstream_];
  spdlog::warn("replica: following {} ({})", leader_, why);
  connect_updates();
}

zmq::socket_t ChpFollower::new_dealer() {
  zmq::socket_t dealer(ctx_, zmq::socket_type::dealer);  // a fresh socket: no stale replies
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::rcvhwm, receive_hwm(receive_budget_, limits_));  // the leader waits (ROUTER)
  dealer.set(zmq::sockopt::maxmsgsize, largest_chp_frame(limits_));
  security_.as_client(dealer);
  if (!pair_token_.empty()) dealer.set(zmq::sockopt::routing_id, pair_routing_id(pair_token_));
  dealer.connect(leader_);
  return dealer;
}

void ChpFollower::request_snapshot() {
  dealer_ = new_dealer();
  // A replica asks as a client (an ICANHAZ? is a vote): its upstream may
  // be another replica, and only the HA peer may send PEERSNAPSHOT?.
  std::string_view command = replica_ ? chp::kIcanhaz : chp::kPeerSnapshot;
  (void)try_send(dealer_, protocol::Frames{std::string(command), subtree()});
  if (replica_) ++full_syncs_;
  phase_ = Phase::kRequested;
  loaded_.clear();
  caught_.clear();
  held_.clear();
  held_bytes_ = 0;
  buffered_.clear();
  buffered_bytes_ = 0;
  last_progress_ = Clock::now();
}

// Asks for the updates after our last sequence; KVPUBs arriving meanwhile
// are buffered as during a sync, and the map stays complete throughout.
void ChpFollower::request_catchup(const std::string& why) {
  spdlog::warn("{}: catching up from {} after sequence {}: {}", replica_ ? "replica" : "HA follower", leader_,
               store_.last_sequence(), why);
  dealer_ = new_dealer();
  std::string after;
  protocol::put_be<std::uint64_t>(after, store_.last_sequence());
  if (replica_) {
    (void)try_send(dealer_, protocol::Frames{std::string(chp::kIcanhaz), subtree(), std::move(after)});  // a resume
  } else {
    (void)try_send(dealer_, protocol::Frames{std::string(chp::kPeerCatchup), std::move(after)});
  }
  phase_ = Phase::kCatchingUp;
  caught_.clear();
  held_.clear();
  held_bytes_ = 0;
  buffered_.clear();
  buffered_bytes_ = 0;
  last_progress_ = Clock::now();
}

void ChpFollower::restart(const std::string& why) {
  spdlog::warn("HA follower: resync from {}: {}", leader_, why);
  request_snapshot();
}

void ChpFollower::on_timer() {
  if (replica_) return replica_timer();
  if (phase_ != Phase::kFollowing && Clock::now() - last_progress_ > kSnapshotRetry) {
    restart(phase_ == Phase::kCatchingUp ? "catch-up request unanswered" : "snapshot request unanswered");
  }
}

// A replica tries the next upstream after silence or an unanswered request
// (a passive of the pair ignores it), resuming when its map is complete.
void ChpFollower::replica_timer() {
  auto now = Clock::now();
  std::string why;
  if (phase_ == Phase::kFollowing && now - last_heard_ > replica_->silence) {
    why = "no KVPUB or HUGZ from " + leader_ + " for " + std::to_string(replica_->silence.count()) + " ms";
  } else if (phase_ != Phase::kFollowing && now - last_progress_ > kSnapshotRetry) {
    why = "request to " + leader_ + " unanswered";
  } else {
    return;
  }
  next_upstream(why);
  if (store_.synced() && store_.last_sequence() != 0) return request_catchup(why);
  request_snapshot();
}

void ChpFollower::notify(std::span<const storage::ChpWrite> applied) const {
  if (applied.empty()) return;
  if (replica_ && replica_->applied) replica_->applied(applied);
  if (applied_) applied_(applied);
}

std::uint64_t ChpFollower::expiry_of(const std::string& properties) const {
  auto ttl = chp::ttl_seconds(properties, limits_);
  return ttl.ok() && *ttl > 0 ? now_ms_() + *ttl * 1000 : 0;
}

// Consecutive KVPUBs of one call go to the store as one batch (as the
// active writes them), so a passive keeps up with its active's rate.
void ChpFollower::on_update_socket() {
  ReceivedMessage msg;
  std::vector<storage::ChpWrite> batch;  // sequences last_sequence()+1, +2, ... (a subtree's: ascending)
  for (std::size_t n = 0; n < kPerTurn && try_recv(sub_, &msg); ++n) {
    auto update = chp::decode_update(msg.frames(), limits_);
    if (!update) continue;
    last_heard_ = Clock::now();
    std::uint64_t last = batch.empty() ? store_.last_sequence() : batch.back().sequence;  // once applied
    if (auto* hugz = std::get_if<chp::Hugz>(&update.value())) {
      // The leader's HUGZ follows every KVPUB up to its sequence: above
      // ours, some were lost (a full receive queue drops the latest); for
      // a subtree replica, the updates in between were of other subtrees.
      if (phase_ == Phase::kFollowing && hugz->sequence > last) {
        if (!apply_batch(batch)) return;
        batch.clear();
        if (gapped()) {
          // No update of ours up to it: its sequence, in our current epoch.
          storage::ChpEpochs epochs = store_.epochs();
          if (!epochs.empty()) epochs.back().last = hugz->sequence;
          if (auto s = store_.advance_to(hugz->sequence, epochs); !s.ok()) return restart(s.message());
          continue;
        }
        return request_catchup("HUGZ at sequence " + std::to_string(hugz->sequence) + ", above our " +
                               std::to_string(last) + ": updates were lost");
      }
      continue;
    }
    auto& kv = std::get<chp::KvMsg>(update.value());
    if (gapped() && !kv.key.starts_with(replica_->subtree)) continue;  // "HUGZ..." keys match the HUGZ subscription
    if (phase_ != Phase::kFollowing) {
      if (!buffer(kv)) return;
      continue;
    }
    if (kv.sequence <= last) {
      pending_.seen_from_active(kv.uuid);
      continue;
    }
    if (kv.sequence != last + 1 && !gapped()) {
      // The catch-up brings this update too: the active published it
      // before we asked.
      std::string why = "sequence gap: " + std::to_string(last) + " -> " + std::to_string(kv.sequence);
      if (apply_batch(batch)) request_catchup(why);
      return;
    }
    pending_.seen_from_active(kv.uuid);
    batch.push_back(write_of(kv));
  }
  apply_batch(batch);
}

// Applies consecutive KVPUBs; false (and a new sync) when the store fails.
bool ChpFollower::apply_batch(std::vector<storage::ChpWrite>& batch) {
  if (batch.empty()) return true;
  if (auto s = store_.apply(batch); !s.ok()) {
    restart(s.message());
    return false;
  }
  notify(batch);
  return true;
}

// Keeps a KVPUB that arrived while the snapshot loads or a catch-up runs.
// Past the byte budget a passive syncs again (false); a replica drops what
// it holds and keeps the newest: the gap they leave is resumed from the
// upstream's history once the map is in (a new full snapshot would meet
// the same flow of updates, again and again, on a busy upstream).
bool ChpFollower::buffer(chp::KvMsg& kv) {
  std::uint64_t bytes = kv.key.size() + kv.uuid.size() + kv.properties.size() + kv.body.size();
  buffered_bytes_ += bytes;
  if (buffered_.size() >= kMaxBuffered || buffered_bytes_ > receive_budget_) {
    if (replica_) {
      spdlog::warn(
          "replica: {} update(s) received while syncing dropped (more than --receive-buffer-bytes); "
          "they are resumed from {} afterwards",
          buffered_.size(), leader_);
      buffered_.clear();
      buffered_bytes_ = bytes;
      buffered_.push_back(std::move(kv));
      return true;
    }
    restart("too many updates while syncing (" + std::to_string(buffered_bytes_) +
            " bytes, more than --receive-buffer-bytes)");
    return false;
  }
  buffered_.push_back(std::move(kv));
  return true;
}

storage::ChpWrite ChpFollower::write_of(chp::KvMsg& kv) const {
  std::uint64_t expires = kv.body.empty() ? 0 : expiry_of(kv.properties);
  return {std::move(kv.key), std::move(kv.uuid), std::move(kv.properties), std::move(kv.body), expires,
          kv.sequence,       now_ms_()};
}

}  // namespace zstore::server
