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
  storage::ChpWrite w;
  w.key.assign(req->key);
  w.uuid.assign(req->uuid);
  w.properties = std::move(req->properties);
  w.value.assign(req->body);
  w.expires_at_ms = (req->ttl_seconds > 0 && !req->body.empty()) ? now + req->ttl_seconds * 1000 : 0;
  w.written_ms = now;
  w.remember_outcome = true;
  write_requests_.add(identity, std::move(w), req->precondition);
}

void ChpServer::commit_write_requests() {
  if (write_requests_.empty()) return;
  std::vector<storage::ChpWrite> writes;
  auto replies = write_requests_.decide(store_, config_.now_ms(), &writes);
  for (const auto& r : replies) {
    if (r.outcome.kind == chp::WriteOutcome::Kind::kRefused)
      metrics_.writes_refused.fetch_add(1, std::memory_order_relaxed);
  }
  if (!writes.empty()) {
    bool applied = commit_and_publish(writes);
    auto done = applied ? write_requests_.applied(writes) : write_requests_.failed("the store refused the write");
    if (applied && ha_) ha_->note_client_writes(writes);
    std::move(done.begin(), done.end(), std::back_inserter(replies));
  }
  for (auto& r : replies) {
    if (r.outcome.kind == chp::WriteOutcome::Kind::kApplied)
      metrics_.writes_confirmed.fetch_add(1, std::memory_order_relaxed);
    answer_write(std::move(r));
  }
}

void ChpServer::answer_write(ChpWriteRequests::Reply reply) {
  if (ha_ && ha_->hold_reply(reply)) return;
  send_written(reply);
}

void ChpServer::send_written(const ChpWriteRequests::Reply& reply) {
  if (try_send(router_, chp::encode_written(reply.outcome), reply.identity) == transport::SendOutcome::kWouldBlock) {
    metrics_.written_unsent.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace zstore::server
