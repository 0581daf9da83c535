// ChpFollower's syncs (chp_follower.h): the replies on its snapshot socket.
// A full snapshot clears the map and loads it, batch by batch, until
// KTHXBAI; a catch-up (or a replica's resume) applies the updates after our
// sequence, or turns into a full snapshot when the upstream's history no
// longer reaches back. KVPUBs buffered meanwhile are applied at the end.
#include <algorithm>

#include <spdlog/spdlog.h>

#include "server/ha/chp_follower.h"
#include "server/reactor/zmq_frames.h"

namespace zstore::server {

namespace chp = protocol::chp;

void ChpFollower::on_snapshot_socket() {
  ReceivedMessage msg;
  for (std::size_t n = 0; n < kPerTurn && try_recv(dealer_, &msg); ++n) {
    auto reply = chp::decode_snapshot_reply(msg.frames(), limits_);
    if (!reply) {
      restart("malformed snapshot message: " + reply.error().detail);
      return;
    }
    last_progress_ = last_heard_ = Clock::now();
    if (phase_ == Phase::kCatchingUp) {
      on_catchup_reply(reply.value());
      if (phase_ == Phase::kLoading) continue;  // a replica's declined resume: the rest is its snapshot
      if (phase_ != Phase::kCatchingUp) return;
      continue;
    }
    if (phase_ == Phase::kRequested && !begin_loading()) return;
    if (auto* done = std::get_if<chp::Kthxbai>(&reply.value())) return finish_sync(*done);
    load_record(std::get<chp::KvMsg>(reply.value()));
  }
}

// The first message of a snapshot: from here the local map is incomplete
// until KTHXBAI. False (and a new sync) when the store fails.
bool ChpFollower::begin_loading() {
  if (auto s = store_.set_synced(false); !s.ok()) {
    restart(s.message());
    return false;
  }
  if (auto s = store_.clear(); !s.ok()) {
    restart(s.message());
    return false;
  }
  phase_ = Phase::kLoading;
  return true;
}

void ChpFollower::load_record(chp::KvMsg& kv) {
  pending_.seen_from_active(kv.uuid);
  std::uint64_t expires = 0;
  std::string properties = chp::take_expires_at(kv.properties, &expires);
  if (expires == 0) expires = expiry_of(properties);  // a leader that sent the ttl only
  loaded_.push_back(
      {std::move(kv.key), {kv.sequence, expires, std::move(kv.uuid), std::move(properties), std::move(kv.body)}});
  if (loaded_.size() >= kLoadBatch) flush_loaded();
}

void ChpFollower::flush_loaded() {
  if (auto s = store_.load(loaded_); !s.ok()) restart(s.message());
  loaded_.clear();
}

void ChpFollower::finish_sync(const chp::Kthxbai& done) {
  flush_loaded();
  if (phase_ != Phase::kLoading) return;
  if (replica_) caught_.clear();
  auto epochs = storage::epochs_in_properties(done.properties);
  if (auto s = store_.adopt(done.sequence, epochs); !s.ok()) return restart(s.message());
  // The map is complete at done.sequence: the KVPUBs buffered meanwhile
  // only move it on (a gap among them is caught up, which needs it synced).
  if (auto s = store_.set_synced(true); !s.ok()) return restart(s.message());
  spdlog::info("{}: synced from {} at sequence {}", replica_ ? "replica" : "HA follower", leader_,
               store_.last_sequence());
  phase_ = Phase::kFollowing;
  apply_buffered();
  if (phase_ != Phase::kFollowing) return;
  // Whatever is still pending is in the snapshot (perhaps as an absence or
  // overwritten: a delete or an old value never shows up by its uuid), or
  // the active has not published it yet and will (we apply its KVPUB), or
  // never will (never published: no client saw it). Kept, an entry of the
  // first kind would be re-applied at takeover, an old value over a newer.
  if (auto dropped = pending_.drop_received_before(pending_.mark()); dropped > 0) {
    spdlog::info("HA follower: {} pending update(s) received before the snapshot completed dropped", dropped);
  }
}

// KVPUBs buffered while syncing or catching up: those above our sequence
// are applied, in batches of kLoadBatch (one store write each, not one per
// update: up to kMaxBuffered of them can wait here), the others are
// already in the map. A gap among them: a replica resumes, a passive syncs.
void ChpFollower::apply_buffered() {
  std::vector<chp::KvMsg> buffered;
  buffered.swap(buffered_);
  buffered_bytes_ = 0;
  std::vector<storage::ChpWrite> batch;  // sequences last_sequence()+1, +2, ... (a subtree's: ascending)
  std::vector<storage::ChpWrite> covered;
  for (auto& kv : buffered) {
    std::uint64_t last = batch.empty() ? store_.last_sequence() : batch.back().sequence;
    if (kv.sequence <= last) {
      pending_.seen_from_active(kv.uuid);  // published; its effect is in the map
      if (applied_ && batch.empty()) covered.push_back(outcome_of(kv));
      continue;
    }
    if (!covered.empty() && !remember_covered(covered)) return;
    if (kv.sequence != last + 1 && !gapped()) {
      std::string why = "sequence gap: " + std::to_string(last) + " -> " + std::to_string(kv.sequence);
      if (!apply_batch(batch)) return;
      // A replica's map stays complete: it resumes from its upstream's history.
      if (replica_) return request_catchup(why);
      return restart(why);
    }
    pending_.seen_from_active(kv.uuid);
    batch.push_back(write_of(kv));
    if (batch.size() >= kLoadBatch) {
      if (!apply_batch(batch)) return;
      batch.clear();
    }
  }
  if (remember_covered(covered)) apply_batch(batch);
}

// A buffered KVPUB the loaded snapshot or catch-up already covered: its
// effect is in the map (perhaps overwritten), its uuid not yet remembered.
storage::ChpWrite ChpFollower::outcome_of(const chp::KvMsg& kv) {
  storage::ChpWrite w;
  w.uuid = kv.uuid;
  w.sequence = kv.sequence;
  return w;
}

// Remembers the covered updates as applied (the store keeps them, and
// applied_ hands them to the server's outcomes), so a client's retry of
// one after a failover is answered applied; false (and a new sync) when
// the store fails. Empties covered.
bool ChpFollower::remember_covered(std::vector<storage::ChpWrite>& covered) {
  if (covered.empty()) return true;
  if (auto s = store_.remember_outcomes(covered); !s.ok()) {
    restart(s.message());
    return false;
  }
  applied_(covered);
  covered.clear();
  return true;
}

// One update of a catch-up: the next sequence, applied in batches.
void ChpFollower::on_catchup_reply(chp::SnapshotReply& reply) {
  if (auto* done = std::get_if<chp::Kthxbai>(&reply)) return finish_catchup(*done);
  auto& kv = std::get<chp::KvMsg>(reply);
  if (replica_) return hold_resumed(kv);
  std::uint64_t last = store_.last_sequence() + caught_.size();
  pending_.seen_from_active(kv.uuid);
  if (kv.sequence <= last) return;
  if (kv.sequence != last + 1) {
    return restart("catch-up skips from sequence " + std::to_string(last) + " to " + std::to_string(kv.sequence));
  }
  std::uint64_t expires = 0, written = 0;
  std::string properties = chp::take_expires_at(kv.properties, &expires, &written);
  if (expires == 0 && !kv.body.empty()) expires = expiry_of(properties);
  caught_.push_back({std::move(kv.key), std::move(kv.uuid), std::move(properties), std::move(kv.body), expires,
                     kv.sequence, written != 0 ? written : now_ms_()});
  if (caught_.size() < kLoadBatch) return;
  if (auto s = store_.apply(caught_); !s.ok()) return restart(s.message());
  notify(caught_);
  caught_.clear();
}

// A replica's resume reply, held until it is known to be one. A resume
// sends the updates after our sequence in sequence order (some skipped as
// superseded); a message at or below our sequence, or below the one before
// it, can only be a key of the full snapshot the upstream sent instead (in
// key order): from there the reply is loaded as that snapshot, not asked
// for again. Past the byte budget while still undecided: a new sync.
void ChpFollower::hold_resumed(chp::KvMsg& kv) {
  std::uint64_t last = held_.empty() ? store_.last_sequence() : held_.back().sequence;
  if (kv.sequence <= last) {
    load_held_as_snapshot("its reply is out of sequence order");
    if (phase_ == Phase::kLoading) load_record(kv);
    return;
  }
  held_bytes_ += kv.key.size() + kv.uuid.size() + kv.properties.size() + kv.body.size();
  if (held_bytes_ > receive_budget_) return restart("the resume reply is larger than --receive-buffer-bytes");
  held_.push_back(std::move(kv));
}

// The held reply becomes the first records of a full snapshot.
void ChpFollower::load_held_as_snapshot(const std::string& why) {
  spdlog::warn("replica: {} declined our resume after sequence {} ({}): loading the snapshot it sent instead", leader_,
               store_.last_sequence(), why);
  ++full_syncs_;
  std::vector<chp::KvMsg> held;
  held.swap(held_);
  held_bytes_ = 0;
  if (!begin_loading()) return;
  for (auto& kv : held) {
    load_record(kv);
    if (phase_ != Phase::kLoading) return;  // the store failed: a new sync was asked
  }
}

// resumed=1: we hold every update up to done.sequence; otherwise the
// history no longer reaches back and only a whole snapshot can help.
void ChpFollower::finish_catchup(const chp::Kthxbai& done) {
  auto props = chp::parse_properties(done.properties);
  bool resumed = props && std::any_of(props->begin(), props->end(), [](const chp::Property& p) {
                   return p.first == chp::kResumedProperty && p.second == "1";
                 });
  if (replica_) {
    if (!resumed) {
      // Every message was above our sequence, in order, yet it is the
      // snapshot (the history no longer reaches back): the whole of it.
      load_held_as_snapshot("its history no longer reaches back");
      if (phase_ == Phase::kLoading) finish_sync(done);
      return;
    }
    caught_.clear();
    for (auto& kv : held_) {
      pending_.seen_from_active(kv.uuid);
      caught_.push_back(write_of(kv));
    }
    held_.clear();
    held_bytes_ = 0;
    if (!apply_batch(caught_)) return;
    caught_.clear();
    if (done.sequence < store_.last_sequence()) {
      return restart("the upstream is at sequence " + std::to_string(done.sequence) + ", below our " +
                     std::to_string(store_.last_sequence()));
    }
    // Above ours: a new epoch of the pair (a failover) with no update yet.
    if (done.sequence > store_.last_sequence()) {
      if (auto s = store_.advance_to(done.sequence, storage::epochs_in_properties(done.properties)); !s.ok()) {
        return restart(s.message());
      }
    }
    ++resumes_;
    phase_ = Phase::kFollowing;
    spdlog::info("replica: resumed from {} at sequence {}", leader_, store_.last_sequence());
    return apply_buffered();
  }
  if (!caught_.empty()) {
    if (auto s = store_.apply(caught_); !s.ok()) return restart(s.message());
    notify(caught_);
    caught_.clear();
  }
  if (!resumed) return restart("the active's history no longer reaches back to our sequence");
  if (store_.last_sequence() != done.sequence) {
    return restart("catch-up ended at sequence " + std::to_string(store_.last_sequence()) + ", the active's is " +
                   std::to_string(done.sequence));
  }
  phase_ = Phase::kFollowing;
  apply_buffered();
  if (phase_ == Phase::kFollowing) {
    spdlog::info("HA follower: caught up from {} at sequence {}", leader_, store_.last_sequence());
  }
}

}  // namespace zstore::server
