// ChpServer's per-key history (protocol/chp_key_history.h): HISTORY? on the
// snapshot socket, answered in the same turn from chp_versions
// (ChpStore::key_history: one seek and a step per version, so the cost
// does not grow with the map).
#include <spdlog/spdlog.h>

#include "protocol/chp_key_history.h"
#include "server/chp/chp_server.h"
#include "server/reactor/zmq_frames.h"

namespace zstore::server {

namespace chp = protocol::chp;
using Outcome = chp::HistoryEnd::Outcome;
using State = chp::KeyVersion::State;

void ChpServer::serve_history(const std::string& identity, const ReceivedMessage& msg) {
  auto frames = msg.frames().subspan(1);
  auto end = [&](std::string key, Outcome outcome, std::uint64_t count, std::string detail) {
    (void)try_send(router_, chp::encode_history_end({std::move(key), outcome, count, std::move(detail)}), identity);
  };
  auto req = chp::decode_history_request(frames, config_.limits);
  if (!req) {
    report_malformed("HISTORY?", req.error());
    std::string key =
        frames.size() > 1 && frames[1].size() <= config_.limits.max_key_bytes ? std::string(frames[1]) : "";
    return end(std::move(key), Outcome::kFailed, 0, "malformed: " + req.error().detail);
  }
  // Off (no --chp-key-history): KTHXBAI did not announce key-history=1;
  // a client that asks anyway is told why.
  if (!store_.keeps_key_history()) {
    return end(req->key, Outcome::kFailed, 0,
               "unsupported: this zstored keeps no per-key history (start it with --chp-key-history)");
  }
  // Whoever answers clients' snapshots answers this: a passive's map may be
  // reloading, a replica's not yet taken.
  if (config_.replica ? !replica_has_map() : !serving()) {
    return end(req->key, Outcome::kFailed, 0, "not serving clients (a passive, or a replica without its map)");
  }
  if (!may_read(msg, req->key)) return end(req->key, Outcome::kRefused, 0, "refused by the ACL");
  std::vector<storage::ChpVersion> versions;
  publish_unsynced_now();  // the versions clients were sent, no newer
  storage::Status s = store_.key_history(req->key, req->limit, &versions);
  if (!s.ok()) {
    write_error_log_.log(spdlog::level::err, "history of a key: {}", s.message());
    return end(req->key, Outcome::kFailed, 0, "storage error: " + s.message());
  }
  metrics_.history_requests.fetch_add(1, std::memory_order_relaxed);
  std::uint64_t sent = 0;
  for (auto& v : versions) {
    // A delete without UUID is what the TTL sweep writes (a client's carries one).
    State state = !v.entry.value.empty() ? State::kSet : v.entry.uuid.empty() ? State::kExpired : State::kDeleted;
    chp::KeyVersion out{req->key,
                        v.entry.sequence,
                        state,
                        v.written_ms,
                        v.entry.expires_at_ms,
                        std::move(v.entry.properties),
                        std::move(v.entry.value)};
    if (try_send(router_, chp::encode_kvhist(out), identity) != transport::SendOutcome::kSent) {
      // The client's pipe is full or gone: it times out, or asks again.
      bad_input_log_.log(spdlog::level::warn, "history reply cut after {} of {} versions: the client's pipe is full",
                         sent, versions.size());
      return;
    }
    ++sent;
  }
  end(req->key, Outcome::kOk, sent, {});
}

}  // namespace zstore::server
