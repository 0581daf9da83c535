#include "client/clone_agent.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <exception>
#include <utility>

#include <zmq_addon.hpp>

#include "transport/zmq_frames.h"

namespace zstore::client {

namespace chp = protocol::chp;
using std::chrono::milliseconds;

namespace {

constexpr std::size_t kBatch = 256;      // messages read per socket per round
constexpr milliseconds kFlushRetry{10};  // a collector at its high-water mark
constexpr std::string_view kHugzTopic = chp::kHugz;

// The agent takes no signals: they belong to the application's threads.
void block_signals() {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
}

int poll_timeout_ms(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::ceil<milliseconds>(deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<milliseconds::rep>(left.count(), 0, 60000));
}

}  // namespace

CloneAgent::CloneAgent(zmq::context_t& ctx, const Options& options, std::vector<ServerEndpoints> servers,
                       ClientState& state, zmq::socket_t pipe)
    : ctx_(ctx),
      options_(options),
      servers_(std::move(servers)),
      state_(state),
      pipe_(std::move(pipe)),
      sync_(options.subtree, kMaxBufferedUpdates) {
  state_.expect_servers(servers_.size());
  refused_.assign(servers_.size(), false);
  for (const auto& server : servers_) {
    zmq::socket_t xpub = make_socket(zmq::socket_type::xpub);
    xpub.set(zmq::sockopt::xpub_nodrop, 1);
    Collector c{watch(std::move(xpub)), {}, {}};
    c.socket.socket().connect(server.collector);
    collectors_.push_back(std::move(c));
  }
}

void CloneAgent::run() {
  block_signals();
  try {
    start_session(0, SessionCause::kStart);
  } catch (const std::exception& e) {
    count_agent_error(e.what());
  }
  while (true) {
    try {
      if (!step()) break;
    } catch (const zmq::error_t& e) {
      if (e.num() == ETERM) break;
      count_agent_error(e.what());
    } catch (const std::exception& e) {
      count_agent_error(e.what());
    }
  }
  close_all();
}

bool CloneAgent::step() {
  std::vector<zmq::pollitem_t> items{{pipe_.handle(), 0, ZMQ_POLLIN, 0}};
  for (auto& c : collectors_) items.push_back({c.socket.socket().handle(), 0, ZMQ_POLLIN, 0});
  auto add = [&items](zmq::socket_t& s) {
    items.push_back({s.handle(), 0, ZMQ_POLLIN, 0});
    return items.size() - 1;
  };
  const std::size_t sub_at = sub_ ? add(sub_.socket()) : 0;
  const std::size_t dealer_at = dealer_ ? add(dealer_.socket()) : 0;
  const std::size_t writer_at = writer_ ? add(writer_.socket()) : 0;
  for (auto* w : {&sub_, &dealer_, &writer_}) {
    if (*w) add(w->monitor().events());
  }
  for (auto& c : collectors_) add(c.socket.monitor().events());
  const std::uint64_t session = session_;

  zmq::poll(items.data(), items.size(), milliseconds(poll_timeout_ms(next_deadline())));
  check_handshakes();

  auto ready = [&items](std::size_t at) { return at != 0 && (items[at].revents & ZMQ_POLLIN) != 0; };
  if ((items[0].revents & ZMQ_POLLIN) && !on_pipe()) return false;
  for (std::size_t i = 0; i < collectors_.size(); ++i) {
    if (items[1 + i].revents & ZMQ_POLLIN) on_collector(collectors_[i]);
  }
  if (ready(sub_at)) on_subscriber();
  if (session == session_ && ready(dealer_at)) on_snapshot_socket();
  if (session == session_ && ready(writer_at)) on_writer();
  on_timers();
  return true;
}

CloneAgent::Clock::time_point CloneAgent::next_deadline() const {
  auto deadline = last_heard_ + options_.failover_timeout;
  if (phase_ != Phase::kLive) deadline = std::min(deadline, request_deadline_);
  if (flush_retry_) deadline = std::min(deadline, *flush_retry_);
  if (auto write = next_write_deadline()) deadline = std::min(deadline, *write);
  return deadline;
}

// ---------------------------------------------------------------------------
// Commands from the API

bool CloneAgent::on_pipe() {
  for (std::size_t n = 0; n < kBatch; ++n) {
    transport::Message msg;
    if (!transport::try_recv(pipe_, &msg)) return true;
    auto frames = msg.frames();
    if (frames.empty() || frames[0] == kPipeStop) return false;
    if (frames[0] == kPipeSet) {
      if (frames.size() == 1 + chp::kKvFrames) forward_kvset(protocol::Frames(frames.begin() + 1, frames.end()));
      // Only once forward_kvset counted it as queued: in between, set()
      // saw one write fewer than wait and let one past max_unsent_writes.
      state_.write_taken();
    }
    if (frames[0] == kPipeWrite) take_write(protocol::Frames(frames.begin() + 1, frames.end()));
  }
  return true;
}

// A server's queue is bounded too: past max_unsent_writes (which set()
// keeps the fewest queued below) plus what the pipe holds, only a server
// that does not listen while another takes the writes loses its oldest.
void CloneAgent::forward_kvset(protocol::Frames frames) {
  for (auto& c : collectors_) {
    c.pending.push_back(frames);
    if (c.pending.size() > options_.max_unsent_writes + kPipeSlack) {
      c.pending.pop_front();
      state_.update_stats([](ClientStats& s) { ++s.kvsets_dropped; });
    }
    flush(c);
  }
  note_unsent();
}

void CloneAgent::note_unsent() {
  std::size_t fewest = SIZE_MAX;
  for (const auto& c : collectors_) fewest = std::min(fewest, c.pending.size());
  state_.set_unsent(fewest == SIZE_MAX ? 0 : fewest);
}

// Sends queued KVSETs once the server's SUB has subscribed to us.
void CloneAgent::flush(Collector& c) {
  while (!c.topics.empty() && !c.pending.empty()) {
    if (transport::try_send(c.socket.socket(), c.pending.front()) != transport::SendOutcome::kSent) {
      flush_retry_ = Clock::now() + kFlushRetry;
      return;
    }
    c.pending.pop_front();
  }
  note_unsent();
}

void CloneAgent::on_collector(Collector& c) {
  heard_from(static_cast<std::size_t>(&c - collectors_.data()));  // only a server's SUB subscribes
  for (std::size_t n = 0; n < kBatch; ++n) {
    zmq::message_t msg;
    if (!c.socket.socket().recv(msg, zmq::recv_flags::dontwait)) break;
    if (msg.size() == 0) continue;
    std::string topic(static_cast<const char*>(msg.data()) + 1, msg.size() - 1);
    const auto kind = *static_cast<const unsigned char*>(msg.data());
    if (kind == 1) c.topics.insert(std::move(topic));
    if (kind == 0) c.topics.erase(topic);
  }
  flush(c);
}

// ---------------------------------------------------------------------------
// Sessions and snapshot requests

void CloneAgent::start_session(std::size_t index, SessionCause cause) {
  ++session_;
  stream_max_ = 0;
  last_heard_ = Clock::now();
  current_ = index;
  phase_ = Phase::kSubscribing;
  dealer_.close();
  sub_.close();
  writer_.close();
  writes_taken_ = WritesTaken::kUnknown;
  for (auto& [uuid, w] : writes_) w.sent = false;  // sent again to this session's server
  sync_ = SnapshotSync(options_.subtree, kMaxBufferedUpdates);
  next_wait_ = options_.snapshot_retry_initial;
  request_deadline_ = last_heard_ + vote_interval();
  state_.begin_session(index, cause);

  zmq::socket_t sub = make_socket(zmq::socket_type::sub);
  sub.set(zmq::sockopt::rcvhwm, options_.max_queued_updates);
  sub.set(zmq::sockopt::subscribe, options_.subtree);
  sub.set(zmq::sockopt::subscribe, kHugzTopic);
  sub_ = watch(std::move(sub));
  sub_.socket().connect(servers_[index].publisher);
}

// A fresh DEALER per request: replies to an earlier request, or from a
// server we left, can never reach the new one.
void CloneAgent::ask() {
  dealer_.close();
  sync_.restart_request();
  dealer_ = watch(make_socket(zmq::socket_type::dealer));
  dealer_.socket().connect(servers_[current_].snapshot);
  chp::Icanhaz request{options_.subtree, std::nullopt};
  if (options_.resume && resumable_ && state_.has_map()) request.resume_after = state_.sequence();
  (void)transport::try_send(dealer_.socket(), chp::encode_icanhaz(request));
  state_.update_stats([](ClientStats& s) { ++s.snapshot_requests; });
}

void CloneAgent::send_request() {
  ask();
  phase_ = Phase::kRequesting;
  request_wait_ = next_wait_;
  request_deadline_ = Clock::now() + request_wait_;
  next_wait_ = std::min(next_wait_ * 2, options_.snapshot_retry_max);
}

void CloneAgent::send_vote() {
  ask();
  request_deadline_ = Clock::now() + vote_interval();
}

std::chrono::milliseconds CloneAgent::vote_interval() const {
  return std::max(milliseconds(1), options_.failover_timeout / 2);
}

// Drops the outstanding request; the retry timer sends the next one.
void CloneAgent::abandon_request(const std::string& why) {
  dealer_.close();
  sync_.restart_request();
  state_.update_stats([&](ClientStats& s) { s.last_error = why; });
}

void CloneAgent::on_timers() {
  const auto now = Clock::now();
  if (now - last_heard_ >= options_.failover_timeout) {
    start_session((current_ + 1) % servers_.size(), SessionCause::kFailover);
    return;
  }
  if (phase_ == Phase::kRequesting && now >= request_deadline_) send_request();
  if (phase_ == Phase::kSubscribing && now >= request_deadline_) send_vote();
  write_timers(now);
  if (flush_retry_ && now >= *flush_retry_) {
    flush_retry_.reset();
    for (auto& c : collectors_) flush(c);
    send_writes();
  }
}

// ---------------------------------------------------------------------------
// Traffic from the server in use

void CloneAgent::on_subscriber() {
  const std::uint64_t session = session_;
  for (std::size_t n = 0; n < kBatch && session == session_; ++n) {
    transport::Message msg;
    if (!transport::try_recv(sub_.socket(), &msg)) return;
    last_heard_ = Clock::now();
    heard_from(current_);
    auto update = chp::decode_update(msg.frames());
    if (update) {
      handle_update(std::move(update).value());
    } else {
      count_malformed(update.error());
    }
    if (session != session_) return;  // the update started a new session
    // Any message proves our subscription is live: updates published after
    // the snapshot will reach us, so it is now safe to ask for it.
    if (phase_ == Phase::kSubscribing) send_request();
  }
}

void CloneAgent::handle_update(chp::Update update) {
  if (auto* hugz = std::get_if<chp::Hugz>(&update)) {
    // One server's stream never goes backwards: a HUGZ below what the stream
    // already showed means the server lost its history (a restart that reset
    // the sequence), and only a fresh snapshot can tell what it holds now.
    // HUGZ with sequence 0 (the reference server's) carry no information.
    if (hugz->sequence != 0 && hugz->sequence < stream_max_) {
      start_session(current_, SessionCause::kResync);
      return;
    }
    stream_max_ = std::max(stream_max_, hugz->sequence);
    // zstored's HUGZ carries its last sequence, after every KVPUB up to it:
    // a whole-map client below it missed some.
    if (phase_ == Phase::kLive && options_.subtree.empty() && hugz->sequence > state_.sequence()) {
      on_gap();
    }
    return;
  }
  stream_max_ = std::max(stream_max_, std::get<chp::KvMsg>(update).sequence);
  handle_kvpub(std::get<chp::KvMsg>(std::move(update)));
}

void CloneAgent::handle_kvpub(chp::KvMsg msg) {
  if (!in_subtree(msg.key, options_.subtree)) return;  // e.g. "HUGZ..." keys seen through the HUGZ topic
  if (phase_ == Phase::kLive) {
    // Within a server's stream a whole-map client sees every sequence; a
    // jump means the server dropped updates for us (we were slow).
    std::uint64_t last = state_.sequence();
    if (options_.subtree.empty() && msg.sequence > last + 1) return on_gap();
    if (auto change = state_.apply(msg)) notify({*change});
    return;
  }
  state_.note_uuid(msg.uuid);
  if (!sync_.buffer_update(std::move(msg))) start_session(current_, SessionCause::kResync);
}

void CloneAgent::on_snapshot_socket() {
  for (std::size_t n = 0; n < kBatch && dealer_; ++n) {
    transport::Message msg;
    if (!transport::try_recv(dealer_.socket(), &msg)) return;
    heard_from(current_);
    if (phase_ == Phase::kSubscribing) continue;  // the reply to a vote: not proven, not liveness
    last_heard_ = Clock::now();
    request_deadline_ = last_heard_ + request_wait_;
    auto reply = chp::decode_snapshot_reply(msg.frames());
    if (!reply) {
      count_malformed(reply.error());
      abandon_request("snapshot abandoned: " + reply.error().detail);  // it would miss an entry
      return;
    }
    handle_reply(std::move(reply).value());
  }
}

void CloneAgent::handle_reply(chp::SnapshotReply reply) {
  if (auto* entry = std::get_if<chp::KvMsg>(&reply)) {
    sync_.add_entry(std::move(*entry));
    return;
  }
  const auto& done = std::get<chp::Kthxbai>(reply);
  auto facts = read_kthxbai(done.properties);
  resumable_ = resumable_ || facts.offers_resume;
  load_snapshot(done.sequence, facts.resumed);
  open_writer(facts.takes_writes);
}

void CloneAgent::load_snapshot(std::uint64_t sequence, bool resumed) {
  dealer_.close();
  phase_ = Phase::kLive;
  LoadedSnapshot snapshot = sync_.finish(sequence, resumed);
  notify(state_.load(snapshot));
}

// Updates were lost on the way: a new session on the same server resumes
// from our sequence (or takes a snapshot when the server cannot resume).
void CloneAgent::on_gap() {
  state_.update_stats([](ClientStats& s) { ++s.gaps; });
  start_session(current_, SessionCause::kResync);
}

// ---------------------------------------------------------------------------

void CloneAgent::notify(const std::vector<Change>& changes) {
  if (!options_.on_change) return;
  for (const auto& change : changes) {
    try {
      options_.on_change(change);
    } catch (...) {
      state_.update_stats([](ClientStats& s) { ++s.callback_errors; });
    }
  }
}

void CloneAgent::count_malformed(const protocol::DecodeError& error) {
  state_.update_stats([&](ClientStats& s) {
    ++s.malformed_dropped;
    s.last_error = std::string(to_string(error.kind)) + ": " + error.detail;
  });
}

void CloneAgent::count_agent_error(const std::string& what) {
  state_.update_stats([&](ClientStats& s) {
    ++s.agent_errors;
    s.last_error = what;
  });
}

}  // namespace zstore::client
