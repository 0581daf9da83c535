// ChpServer as a read replica (--replica-of, docs/replicas.md): a
// ChpFollower in replica mode keeps the map with the upstream's sequences;
// every update it persists is published to our own subscribers as the
// upstream published it; KVSETs and WRITE? requests are forwarded upstream,
// never applied here; a map not heard from upstream for stale_after is
// reported stale (KTHXBAI stale-ms, /healthz).
#include <spdlog/spdlog.h>

#include "protocol/chp_writes.h"
#include "protocol/endpoint.h"
#include "server/chp/chp_server.h"

namespace zstore::server {

namespace chp = protocol::chp;

namespace {
// WRITE? requests whose WRITTEN we still wait for; past it one asker (the
// lowest uuid) is forgotten: its client times out and retries.
constexpr std::size_t kMaxWriteAskers = 65536;
}  // namespace

void ChpServer::start_replica() {
  follower_ =
      std::make_unique<ChpFollower>(ctx_, store_, replica_seen_, config_.replica->upstreams.front(), config_.limits,
                                    config_.now_ms, config_.replica->upstream_security, config_.receive_budget_bytes);
  follower_->as_replica({config_.replica->upstreams, config_.replica->silence,
                         [this](std::span<const storage::ChpWrite> applied) { republish(applied); },
                         config_.replica->subtree});
  metrics_.replica_stale_after_ms = config_.replica->stale_after.count();
  spdlog::info("replica of {}{}{} (last sequence {}, map {})", follower_->upstream(),
               config_.replica->subtree.empty() ? "" : " subtree '" + config_.replica->subtree + "'",
               config_.replica->upstream_security.curve() ? " over CURVE" : "", store_.last_sequence(),
               store_.synced() ? "complete" : "incomplete");
  ChpFollower* f = follower_.get();
  poller_.add(
      f->snapshot_socket(), [f] { f->on_snapshot_socket(); }, kFollower);
  poller_.add(
      f->update_socket(), [f] { f->on_update_socket(); }, kFollower);
  follower_->start();
  connect_forwarders();
  // Its replies are relayed as they come; the socket is replaced when the
  // follower moves to another upstream (connect_forwarders).
  poller_.add(
      upstream_writes_, [this] { relay_written(); }, kUpstreamWrites);
}

void ChpServer::republish(std::span<const storage::ChpWrite> applied) {
  for (const auto& w : applied) publish(w);
  metrics_.updates_applied.fetch_add(applied.size(), std::memory_order_relaxed);
  metrics_.last_sequence = store_.last_sequence();
}

// Fresh sockets to the upstream the follower follows now, so forwarded
// writes go where the map comes from (after a failover: the new active).
void ChpServer::connect_forwarders() {
  if (forwarded_to_ == follower_->upstream()) return;
  forwarded_to_ = follower_->upstream();
  upstream_writer_ = zmq::socket_t(ctx_, zmq::socket_type::pub);
  upstream_writer_.set(zmq::sockopt::linger, 0);
  config_.replica->upstream_security.as_client(upstream_writer_);
  upstream_writer_.connect(protocol::tcp_endpoint_at_offset(forwarded_to_, 2).value());
  upstream_writes_ = zmq::socket_t(ctx_, zmq::socket_type::dealer);
  upstream_writes_.set(zmq::sockopt::linger, 0);
  upstream_writes_.set(zmq::sockopt::maxmsgsize, largest_chp_frame(config_.limits));
  config_.replica->upstream_security.as_client(upstream_writes_);
  upstream_writes_.set(zmq::sockopt::immediate, 1);  // no queue to an upstream not connected: forward_write says so
  upstream_writes_.connect(forwarded_to_);
  write_askers_.clear();  // their clients retry (a WRITE? is idempotent by uuid)
}

void ChpServer::replica_tick() {
  follower_->on_timer();
  metrics_.last_sequence = store_.last_sequence();
  connect_forwarders();
  auto silent = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - follower_->last_heard());
  metrics_.replica_upstream_silent_ms = silent.count();
  metrics_.replica_resumes = follower_->resumes();
  metrics_.replica_full_syncs = follower_->full_syncs();
}

bool ChpServer::holds_subtree(std::string_view subtree) {
  if (!config_.replica || subtree.starts_with(config_.replica->subtree)) return true;
  metrics_.snapshots_refused.fetch_add(1, std::memory_order_relaxed);
  bad_input_log_.log(spdlog::level::warn,
                     "snapshot request for subtree '{}' not answered: this replica holds only '{}' "
                     "(--replica-subtree); ask the upstream or a replica of the whole map",
                     subtree, config_.replica->subtree);
  return false;
}

bool ChpServer::replica_stale() const {
  return follower_ && Clock::now() - follower_->last_heard() > config_.replica->stale_after;
}

// The collector's KVSETs, as received, to the upstream's collector.
void ChpServer::forward_kvsets() {
  ReceivedMessage msg;
  std::size_t n = 0;
  for (; n < config_.max_batch && try_recv(collector_, &msg); ++n) {
    auto kv = chp::decode_kvset_view(msg.frames(), config_.limits);
    if (!kv) {
      report_malformed("KVSET", kv.error());
      continue;
    }
    if (!may_write(msg, kv->key)) continue;
    (void)try_send_parts(upstream_writer_, msg.parts);
    metrics_.replica_forwarded.fetch_add(1, std::memory_order_relaxed);
  }
  backlog_vote_.drained(n);
}

void ChpServer::forward_write(const std::string& identity, const ReceivedMessage& msg) {
  auto frames = msg.frames().subspan(1);
  auto req = chp::decode_write(frames, config_.limits);
  if (!req) {
    report_malformed("WRITE?", req.error());
    return;
  }
  if (!may_write(msg, req->key)) {
    (void)try_send(
        router_,
        chp::encode_written({chp::WriteOutcome::Kind::kFailed, std::string(req->uuid), 0, "refused by the ACL"}),
        identity);
    return;
  }
  // Not queued (the upstream is not connected, or its queue is full): the
  // client is told at once to ask another server of its list rather than
  // wait for an answer that cannot come (its retry is idempotent by uuid).
  if (try_send(upstream_writes_, frames) != SendOutcome::kSent) {
    (void)try_send(router_,
                   chp::encode_written({chp::WriteOutcome::Kind::kNotActive, std::string(req->uuid), 0,
                                        "the replica cannot reach its upstream " + forwarded_to_}),
                   identity);
    return;
  }
  if (write_askers_.size() >= kMaxWriteAskers) write_askers_.erase(write_askers_.begin());
  write_askers_[std::string(req->uuid)] = identity;
  metrics_.replica_forwarded.fetch_add(1, std::memory_order_relaxed);
}

// The upstream's WRITTEN replies, to the clients that asked.
void ChpServer::relay_written() {
  ReceivedMessage msg;
  for (int i = 0; i < 256 && try_recv(upstream_writes_, &msg); ++i) {
    auto written = chp::decode_written(msg.frames());
    if (!written) continue;
    auto it = write_askers_.find(written->uuid);
    if (it == write_askers_.end()) continue;
    (void)try_send(router_, msg.frames(), it->second);
    write_askers_.erase(it);
  }
}

}  // namespace zstore::server
