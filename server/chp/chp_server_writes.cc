// ChpServer's confirmed and conditional writes (protocol/chp_writes.h):
// WRITE? requests on the snapshot socket, decided and committed as one
// group a turn (chp_write_requests.h), answered with WRITTEN; in a joined
// pair an applied one's answer waits for the passive's acknowledgement
// (ChpHa::hold_reply).
#include <spdlog/spdlog.h>

#include <iterator>

#include "protocol/chp_writes.h"
#include "server/chp/chp_server.h"
#include "server/reactor/zmq_frames.h"

namespace zstore::server {

namespace chp = protocol::chp;

// A WRITE? (protocol/chp_writes.h): answered at once when it cannot be
// applied here, else added to this turn's group (committed first when the
// group already has its key, so each precondition sees the write before it).
void ChpServer::take_write(const std::string& identity, const ReceivedMessage& msg) {
  if (config_.replica) return forward_write(identity, msg);
  auto frames = msg.frames().subspan(1);
  auto req = chp::decode_write(frames, config_.limits);
  auto answer = [&](chp::WriteOutcome::Kind kind, std::string_view uuid, std::string detail) {
    std::string id = uuid.size() == chp::kUuidSize ? std::string(uuid) : std::string(chp::kUuidSize, '\0');
    send_written({identity, {kind, std::move(id), 0, std::move(detail)}});
  };
  if (!req) {
    report_malformed("WRITE?", req.error());
    answer(chp::WriteOutcome::Kind::kFailed, frames.size() > 3 ? frames[3] : std::string_view(),
           "malformed: " + req.error().detail);
    return;
  }
  if (!serving()) return answer(chp::WriteOutcome::Kind::kNotActive, req->uuid, "not the active server");
  if (!may_write(msg, req->key)) return answer(chp::WriteOutcome::Kind::kFailed, req->uuid, "refused by the ACL");
  if (auto earlier = write_requests_.earlier(req->uuid)) {
    metrics_.writes_confirmed.fetch_add(1, std::memory_order_relaxed);
    answer_write({identity, std::move(*earlier)});
    return;
  }
  if (write_requests_.has_key(req->key)) commit_write_requests();
  const std::uint64_t now = config_.now_ms();
  storage::ChpWrite& w = write_requests_.add(identity, req->key, req->precondition);
  w.uuid.assign(req->uuid);
  w.properties.assign(req->properties);
  w.value.assign(req->body);
  w.expires_at_ms = (req->ttl_seconds > 0 && !req->body.empty()) ? now + req->ttl_seconds * 1000 : 0;
  w.sequence = 0;
  w.written_ms = now;
  w.remember_outcome = true;
}

void ChpServer::commit_write_requests() {
  if (write_requests_.empty()) return;
  if (wal_sync_) return commit_requests_unsynced();
  std::vector<ChpWriteRequests::Reply> replies;
  std::size_t n = decide_write_requests(&group_writes_, &replies);
  std::span<storage::ChpWrite> writes(group_writes_.data(), n);
  if (!writes.empty()) {
    bool applied = commit_and_publish(writes);
    auto done =
        applied ? write_requests_.applied(writes) : write_requests_.failed(writes, "the store refused the write");
    if (applied && ha_) ha_->note_client_writes(writes);
    std::move(done.begin(), done.end(), std::back_inserter(replies));
    for (auto& w : writes) storage::release_large_buffers(w);
  }
  for (auto& r : replies) {
    if (r.outcome.kind == chp::WriteOutcome::Kind::kApplied)
      metrics_.writes_confirmed.fetch_add(1, std::memory_order_relaxed);
    answer_write(std::move(r));
  }
}

// The group judged (chp_write_requests.h) into the first n of *writes, n
// returned; its refusals counted.
std::size_t ChpServer::decide_write_requests(std::vector<storage::ChpWrite>* writes,
                                             std::vector<ChpWriteRequests::Reply>* replies) {
  std::size_t before = replies->size();
  std::size_t n = write_requests_.decide(store_, config_.now_ms(), writes, replies);
  for (std::size_t i = before; i < replies->size(); ++i) {
    if ((*replies)[i].outcome.kind == chp::WriteOutcome::Kind::kRefused)
      metrics_.writes_refused.fetch_add(1, std::memory_order_relaxed);
  }
  return n;
}

void ChpServer::answer_write(ChpWriteRequests::Reply reply) {
  if (ha_ && ha_->hold_reply(reply)) return;
  send_written(reply);
}

// Sent now, or kept (written_outbox.h) while the writer's queue is full.
void ChpServer::send_written(const ChpWriteRequests::Reply& reply) {
  count_written(written_outbox_.send(reply.identity, reply.outcome));
}

void ChpServer::flush_written() { count_written(written_outbox_.flush()); }

void ChpServer::count_written(std::size_t dropped) {
  if (dropped != 0) metrics_.written_unsent.fetch_add(dropped, std::memory_order_relaxed);
  metrics_.written_waiting.store(written_outbox_.waiting(), std::memory_order_relaxed);
}

}  // namespace zstore::server
