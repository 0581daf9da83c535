#include "server/chp/chp_server.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <iterator>

#include "protocol/chp_key_history.h"
#include "protocol/chp_writes.h"
#include "protocol/endpoint.h"
#include "protocol/byte_order.h"
#include "server/reactor/reactor_turn.h"
#include "server/reactor/zmq_frames.h"

namespace zstore::server {

namespace chp = protocol::chp;

namespace {

std::uint64_t system_now_ms() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

}  // namespace

ChpServer::ChpServer(zmq::context_t& ctx, storage::ChpStore& store, ChpServerConfig config, ChpMetrics& metrics)
    : ctx_(ctx),
      store_(store),
      config_(std::move(config)),
      metrics_(metrics),
      snapshots_(256, config_.snapshot_stall, config_.snapshot_fairness),
      io_vote_(config_.io_batching),
      backlog_vote_(config_.io_batching,
                    static_cast<std::size_t>(receive_hwm(config_.receive_budget_bytes, config_.limits))),
      written_outbox_([this](const std::string& identity, const protocol::chp::WriteOutcome& outcome) {
        protocol::chp::WrittenFrames frames(outcome);
        return try_send(router_, frames.frames(), identity);
      }),
      replica_seen_(1'000'000, 1'000'000, config_.receive_budget_bytes) {
  if (!config_.now_ms) config_.now_ms = system_now_ms;
  // Outcomes of confirmed writes (and of a passive's updates) from before a
  // restart: a retry of one is answered applied, not judged again.
  for (const auto& o : store_.take_remembered_outcomes()) write_requests_.remember_applied(o.uuid_view(), o.sequence);
}

ChpServer::~ChpServer() { stop(); }

std::vector<std::string> ChpServer::endpoints() const {
  auto at = [this](int offset) {
    return protocol::tcp_endpoint(config_.bind, static_cast<std::uint16_t>(config_.port + offset));
  };
  return {at(0), at(1), at(2)};
}

void ChpServer::start() {
  auto max_frame = largest_chp_frame(config_.limits);
  router_ = zmq::socket_t(ctx_, zmq::socket_type::router);
  router_.set(zmq::sockopt::router_mandatory, 1);
  router_.set(zmq::sockopt::maxmsgsize, static_cast<std::int64_t>(config_.limits.max_key_bytes + 64));
  // A client that stops reading holds at most this many messages in its
  // pipe; the snapshot pump's byte budget counts them (chp_snapshots.h).
  router_.set(zmq::sockopt::sndhwm,
              static_cast<int>(std::max<std::size_t>(1, config_.snapshot_fairness.pipe_messages)));
  router_.set(zmq::sockopt::linger, 0);
  // With an ACL the publisher is an XPUB whose subscriptions we set ourselves.
  publisher_ = zmq::socket_t(ctx_, config_.acl ? zmq::socket_type::xpub : zmq::socket_type::pub);
  if (config_.acl) publisher_.set(zmq::sockopt::xpub_manual, 1);
  publisher_.set(zmq::sockopt::sndhwm, 100000);
  publisher_.set(zmq::sockopt::linger, 1000);
  collector_ = zmq::socket_t(ctx_, zmq::socket_type::sub);
  collector_.set(zmq::sockopt::subscribe, "");
  collector_.set(zmq::sockopt::maxmsgsize, max_frame);
  collector_.set(zmq::sockopt::rcvhwm, receive_hwm(config_.receive_budget_bytes, config_.limits));
  collector_.set(zmq::sockopt::linger, 0);
  config_.security.as_server(router_, "chp-snapshot");
  config_.security.as_server(publisher_, "chp-updates");
  config_.security.as_server(collector_, "chp-collector");
  if (ConnectionWatch* w = config_.connections) {
    w->watch(router_, "chp-snapshot");
    published_ = w->watch(publisher_, "chp-updates", config_.subscriber_buffer_bytes);
    w->watch(collector_, "chp-collector");
  }
  auto eps = endpoints();
  router_.bind(eps[0]);
  publisher_.bind(eps[1]);
  collector_.bind(eps[2]);
  router_ep_ = BoundEndpoint(&router_, "CHP snapshot port", &metrics_.ports_unbound);
  publisher_ep_ = BoundEndpoint(&publisher_, "CHP publisher", &metrics_.ports_unbound);
  collector_ep_ = BoundEndpoint(&collector_, "CHP collector", &metrics_.ports_unbound);
  revocations_ = KeyRevocations::Watch(config_.revocations);
  if (config_.acl) {
    acl_generation_ = config_.acl->generation();
    subscribed_under_ = config_.acl->current();
  }

  metrics_.last_sequence = store_.last_sequence();
  if (config_.ha) {
    ChpHaSettings settings{config_.limits, config_.now_ms, config_.security, config_.receive_budget_bytes,
                           config_.max_batch};
    ChpHaHost& host = *this;
    ha_ = std::make_unique<ChpHa>(ctx_, store_, *config_.ha, std::move(settings), metrics_, poller_, host, ha_state_);
  }
  start_sync_queue();
  poller_.add(
      collector_, [this] { drain_collector(); }, kCollector);
  poller_.add(
      router_, [this] { serve_snapshot_requests(); }, kSnapshotPort);
  if (config_.acl)
    poller_.add(
        publisher_, [this] { serve_subscriptions(); }, kSubscriptions);
  if (config_.replica) start_replica();
  reactor_.start([this] { run(); });
}

void ChpServer::stop() {
  if (!reactor_.stop()) return;
  if (config_.connections) {
    for (auto* s : {&router_, &publisher_, &collector_}) ConnectionWatch::unwatch(*s);
  }
  router_.close();
  publisher_.close();
  collector_.close();
}

int ChpServer::poll_timeout_ms() const {
  if (expiry_backlog_) return 0;
  if (snapshots_.ready()) return 0;                                       // more to send: only look for input
  if (ha_ && ha_->work_ready()) return 0;                                 // a hand-over's next step
  if (endpoint_unbound()) return 5;                                       // bound again soon (follow_reloads)
  if (snapshots_.active()) return 1;                                      // paused sessions retry soon
  if (!written_outbox_.empty()) return written_outbox_.stuck() ? 10 : 1;  // answers a writer's queue could not take
  // The timers that are due on this server: HUGZ and expiry only while it
  // serves (a passive never moves them on, so counting them would spin),
  // the HA state beat in a pair; other timers (follower retry, history
  // trim) are checked at least every second. Rounded up: a wait rounded
  // down to 0 ms would spin through the last millisecond of each timer.
  auto now = Clock::now();
  auto next = now + std::chrono::seconds(1);
  if (serving()) next = std::min({next, last_hugz_ + config_.hugz_interval, next_expiry_});
  if (ha_) next = ha_->next_deadline(next);  // the HA state beat, held writes' timeouts
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
  return static_cast<int>(std::clamp<long long>(ms, 0, 1000));
}

void ChpServer::run() {
  spdlog::info("CHP serving on {} (snapshot), {} (publisher), {} (collector); last sequence {}", endpoints()[0],
               endpoints()[1], endpoints()[2], store_.last_sequence());
  last_hugz_ = Clock::now();
  next_expiry_ = Clock::now();  // expire what lapsed while we were down,
  expire_due();                 // before the first snapshot request is served
  const int stop_fd = reactor_.stop_item().fd;
  poller_.add(stop_fd, [] {});  // turn() ends the loop when it is ready, before any handler
  reactor_.loop("CHP", loop_error_log_, metrics_.loop_errors, [this] { return turn(); });
  publish_unsynced_now();
  poller_.remove(stop_fd);
  spdlog::info("CHP stopped at sequence {}", store_.last_sequence());
}

bool ChpServer::turn() {
  const int stop_fd = reactor_.stop_item().fd;
  poller_.poll(std::chrono::milliseconds(poll_timeout_ms()));
  if (poller_.ready(stop_fd)) return false;
  if (!written_outbox_.empty()) flush_written();  // before this turn's answers
  follow_reloads();                               // before this turn's updates are read and published
  // The ready sockets' handlers, by rank: the peer's state first, so that a
  // vote is never judged on a stale view of the peer (after a long turn its
  // heartbeats wait in the queue); then the collector, the snapshot port,
  // the follower, the ACL's subscriptions, a replica's relayed replies, the
  // hand-over. A handler that replaces the follower or the reconciler
  // removes the old one's sockets: they are not dispatched after it.
  poller_.dispatch();
  if (ha_) ha_->after_dispatch();  // a passive's follower and PEERACK, held writes, the hand-over
  if (config_.replica) replica_tick();
  pump_snapshots();
  io_vote_.set(snapshots_.active());
  expire_due();
  trim_history_by_age();
  store_.release_idle_trim_reader();
  heartbeat();
  if (ha_) ha_->send_state();
  return true;
}

void ChpServer::report_malformed(const char* where, const protocol::DecodeError& error) {
  metrics_.malformed.count(error.kind);
  bad_input_log_.log(spdlog::level::warn, "dropped malformed {} ({}): {}", where, protocol::to_string(error.kind),
                     error.detail);
}

void ChpServer::drain_collector() {
  if (config_.replica) return forward_kvsets();  // a replica applies only its upstream's updates
  CollectorBatch& b = batch_to_fill();
  // Malformed messages count toward the batch: a flood of them cannot keep
  // the loop from HUGZ and HA heartbeats.
  std::size_t n = 0;
  std::size_t bytes = 0;
  std::size_t got = 0;
  const std::uint64_t now = config_.now_ms();  // one clock read per turn: its updates arrived together
  for (; got < config_.max_batch && bytes < config_.max_batch_bytes; ++got) {
    if (n == b.inbox.size()) b.inbox.emplace_back();
    if (n == b.writes.size()) b.writes.emplace_back();
    if (!try_recv(collector_, &b.inbox[n])) break;
    bytes += b.inbox[n].bytes();
    if (take_kvset(b.inbox[n], now, &b.writes[n])) ++n;
  }
  backlog_vote_.drained(got);
  b.n = n;
  b.received = n;
  std::span<storage::ChpWrite> writes(b.writes.data(), n);
  if (wal_sync_ && serving()) return commit_unsynced(b);
  if (serving()) {
    bool applied = commit_and_publish(writes, std::span<ReceivedMessage>(b.inbox.data(), n));
    if (applied && ha_) ha_->note_client_writes(writes);  // ours win over the peer's
  } else {
    ha_->hold_pending(writes);  // applied at takeover unless the active republishes
  }
  clear(b);
}

void ChpServer::clear(CollectorBatch& b) {
  for (std::size_t i = 0; i < b.received; ++i) b.inbox[i].parts.clear();  // unpublished ones hold no buffer
  for (std::size_t i = 0; i < b.n; ++i) storage::release_large_buffers(b.writes[i]);
  b.n = 0;
  b.received = 0;
  b.ticket = 0;
  b.replies.clear();
}

bool ChpServer::take_kvset(const ReceivedMessage& msg, std::uint64_t now, storage::ChpWrite* w) {
  auto kv = chp::decode_kvset_view(msg.frames(), config_.limits);
  if (!kv) {
    report_malformed("KVSET", kv.error());
    return false;
  }
  if (!may_write(msg, kv->key)) return false;
  w->key.assign(kv->key);
  w->uuid.assign(kv->uuid);
  w->properties.assign(kv->properties);
  w->value.assign(kv->body);
  w->expires_at_ms = (kv->ttl_seconds > 0 && !kv->body.empty()) ? now + kv->ttl_seconds * 1000 : 0;
  w->sequence = 0;
  w->written_ms = now;
  w->remember_outcome = false;  // the slot may have held a WRITE?'s, which is remembered
  return true;
}

bool ChpServer::commit_and_publish(std::span<storage::ChpWrite> writes) { return commit_and_publish(writes, {}); }

bool ChpServer::commit_and_publish(std::span<storage::ChpWrite> writes, std::span<ReceivedMessage> received) {
  if (writes.empty()) return true;
  publish_unsynced_now();  // the collector's waiting batches have the lower sequences
  if (!persisted(store_.apply(writes), writes.size())) return false;
  announce(writes, received);
  return true;
}

bool ChpServer::persisted(const storage::Status& s, std::size_t writes) {
  if (!s.ok()) {
    metrics_.write_failures.fetch_add(writes, std::memory_order_relaxed);
    refused_since_ok_ += writes;
    write_error_log_.log(spdlog::level::err, "refused {} update(s), not published: {}", writes, s.message());
    return false;
  }
  if (refused_since_ok_ > 0) {
    spdlog::warn("writes resumed at sequence {}; {} update(s) were refused meanwhile", store_.last_sequence(),
                 refused_since_ok_);
    refused_since_ok_ = 0;
  }
  return true;
}

void ChpServer::announce(std::span<storage::ChpWrite> writes, std::span<ReceivedMessage> received) {
  after_store_write("CHP", [&] {
    for (std::size_t i = 0; i < writes.size(); ++i) {
      if (i < received.size()) {
        publish_received(received[i], writes[i].sequence);
      } else {
        publish(writes[i]);
      }
    }
  });
  metrics_.updates_applied.fetch_add(writes.size(), std::memory_order_relaxed);
  metrics_.batches.fetch_add(1, std::memory_order_relaxed);
  metrics_.last_sequence = writes.back().sequence;
}

// PUB never blocks: a subscriber past its high-water mark loses messages
// and recovers by sequence gap detection and a new snapshot.
void ChpServer::publish(const storage::ChpWrite& w) {
  chp::KvMsgFrames frames(w.key, w.sequence, w.uuid, w.properties, w.value);
  if (try_send(publisher_, frames.frames()) == SendOutcome::kSent) {
    count_published(w.key.size() + w.uuid.size() + w.properties.size() + w.value.size() + chp::kSequenceSize);
  }
}

// The KVSET's own parts, its sequence frame replaced: the same bytes as
// publish() sends, without copying key, uuid, properties or value.
void ChpServer::publish_received(ReceivedMessage& msg, std::uint64_t sequence) {
  char sequence_bytes[chp::kSequenceSize];
  protocol::store_be<std::uint64_t>(sequence_bytes, sequence);
  msg.parts[1].rebuild(sequence_bytes, sizeof(sequence_bytes));
  std::size_t bytes = 0;  // before the send, which empties the parts
  for (const auto& part : msg.parts) bytes += part.size();
  if (try_send_parts(publisher_, msg.parts) == SendOutcome::kSent) count_published(bytes);
}

// What the connection watch's byte budget compares each subscriber's
// progress with (connection_watch.h).
void ChpServer::count_published(std::size_t bytes) {
  if (published_) published_->published_bytes.fetch_add(bytes, std::memory_order_relaxed);
}

// HUGZ go out every interval even while updates flow: a client mirroring a
// quiet subtree of a busy server sees no KVPUB and would otherwise fail over.
void ChpServer::heartbeat() {
  if (!serving()) return;                             // only the active sends HUGZ, so clients never stay on a passive
  if (config_.replica && !replica_has_map()) return;  // nor on a replica that is loading its map
  auto now = Clock::now();
  if (now - last_hugz_ < config_.hugz_interval) return;
  // Never a sequence a client has not been sent: under a sync queue the
  // store's last may still wait for its fsync.
  std::uint64_t last = wal_sync_ ? metrics_.last_sequence.load() : store_.last_sequence();
  (void)try_send(publisher_, chp::encode_hugz({last}));
  last_hugz_ = now;
}

std::string_view ChpServer::ha_state() const {
  if (config_.replica) return "replica";
  return config_.ha ? to_string(ha_state_.load()) : "standalone";
}

bool ChpServer::accept_vote() {
  if (config_.replica) return replica_has_map();  // a replica loading its map serves nobody
  return !ha_ || ha_->accept_vote();
}

}  // namespace zstore::server
