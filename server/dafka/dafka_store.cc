#include "server/dafka/dafka_store.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "protocol/endpoint.h"
#include "server/reactor/reactor_turn.h"
#include "server/reactor/zmq_frames.h"

namespace zstore::server {

namespace dafka = protocol::dafka;

// The records point into the frames received this turn, kept in parts (a
// deque: its elements never move, and a small frame's bytes live inside
// its zmq::message_t), so no record is copied before it reaches the batch.
struct DafkaStore::Turn {
  std::deque<zmq::message_t> parts;
  std::vector<storage::DafkaRecordRef> records;
  std::vector<dafka::Message> later;  // handled once the records are on disk
  // New partitions admitted this turn (not in the log until commit), and
  // per topic how many of them.
  std::set<Key, storage::DafkaPartitionOrder> admitted;
  std::map<std::string, std::uint64_t, std::less<>> admitted_in_topic;
  std::uint64_t admitted_topics = 0;  // topics among them the log does not hold
};

DafkaStore::DafkaStore(zmq::context_t& ctx, storage::DafkaLog& log, std::string address, DafkaStoreConfig config,
                       DafkaMetrics& metrics)
    : ctx_(ctx),
      log_(log),
      address_(std::move(address)),
      config_(std::move(config)),
      metrics_(metrics),
      discovery_(ctx,
                 DiscoveryConfig{address_, config_.advertise, config_.port, config_.towers, config_.beacon_interval,
                                 config_.beacon_timeout, config_.security},
                 metrics),
      gaps_(config_.fetch_retry, config_.max_fetch_retries),
      fetches_(config_.max_fetch_sessions),
      fetch_pace_(config_.connections ? config_.subscriber_buffer_bytes / 2 : 0, ConnectionWatch::kCheckInterval),
      io_vote_(config_.io_batching),
      partition_limits_(config_.partition_limits),
      limits_log_(1, config_.partition_limits.interval) {
  const auto& l = config_.partition_limits;
  metrics_.limit_topics = l.max_topics;
  metrics_.limit_partitions = l.max_partitions;
  metrics_.limit_partitions_per_topic = l.max_partitions_per_topic;
  metrics_.limit_new_partitions = l.max_new_partitions;
  metrics_.limit_interval_ms = static_cast<std::uint64_t>(l.interval.count());
}

DafkaStore::~DafkaStore() { stop(); }

std::string DafkaStore::endpoint() const { return protocol::tcp_endpoint(config_.bind, config_.port); }

void DafkaStore::start() {
  xpub_ = zmq::socket_t(ctx_, zmq::socket_type::xpub);
  xpub_.set(zmq::sockopt::xpub_verbose, 1);
  xpub_.set(zmq::sockopt::xpub_nodrop, 1);  // would-block pauses FETCH answers instead of losing them
  xpub_.set(zmq::sockopt::sndhwm, 10000);
  xpub_.set(zmq::sockopt::maxmsgsize, std::int64_t{1024});  // subscriptions only
  xpub_.set(zmq::sockopt::linger, 0);
  sub_ = zmq::socket_t(ctx_, zmq::socket_type::sub);
  sub_.set(zmq::sockopt::maxmsgsize, largest_dafka_frame(config_.limits));
  sub_.set(zmq::sockopt::rcvhwm, receive_hwm(config_.receive_budget_bytes, largest_dafka_message(config_.limits)));
  sub_.set(zmq::sockopt::linger, 0);
  for (auto id : {dafka::MsgId::kRecord, dafka::MsgId::kHead, dafka::MsgId::kFetch, dafka::MsgId::kGetHeads}) {
    sub_.set(zmq::sockopt::subscribe, dafka::subscription(id, ""));
  }
  sub_.set(zmq::sockopt::subscribe, dafka::subscription(dafka::MsgId::kDirectRecord, address_));
  sub_.set(zmq::sockopt::subscribe, dafka::subscription(dafka::MsgId::kConsumerHello, address_));
  // A frame over the SUB's ZMQ_MAXMSGSIZE ends that publisher's session
  // for good (libzmq treats it as a protocol error and does not reconnect):
  // the reactor watches disconnections and connects again.
  const std::string monitor_endpoint = "inproc://zstore-dafka-sub-monitor-" + address_;
  if (zmq_socket_monitor(sub_.handle(), monitor_endpoint.c_str(), ZMQ_EVENT_DISCONNECTED) != 0) {
    throw zmq::error_t();
  }
  sub_monitor_ = zmq::socket_t(ctx_, zmq::socket_type::pair);
  sub_monitor_.set(zmq::sockopt::linger, 0);
  sub_monitor_.connect(monitor_endpoint);
  config_.security.as_server(xpub_, "dafka-store");
  if (config_.connections)
    published_ = config_.connections->watch(xpub_, "dafka-store", config_.subscriber_buffer_bytes);
  xpub_.bind(endpoint());
  xpub_ep_ = BoundEndpoint(&xpub_, "Dafka store publisher", &metrics_.ports_unbound);
  revocations_ = KeyRevocations::Watch(config_.revocations);
  discovery_.start();
  reactor_.start([this] { run(); });
}

void DafkaStore::stop() {
  if (!reactor_.stop()) return;
  fetches_.clear();
  discovery_.close();
  if (config_.connections) ConnectionWatch::unwatch(xpub_);
  xpub_.close();
  (void)zmq_socket_monitor(sub_.handle(), nullptr, 0);
  sub_monitor_.close();
  sub_.close();
}

int DafkaStore::poll_timeout_ms() const {
  if (xpub_ep_.unbound()) return 5;  // bound again soon (follow_revocations)
  if (fetches_.active()) return fetches_.blocked() ? 1 : 0;
  auto next = std::min(discovery_.next_deadline(), next_retry_);
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - Clock::now()).count();  // rounded down, it spins
  return static_cast<int>(std::clamp<long long>(ms, 0, 1000));
}

void DafkaStore::run() {
  std::string towers;
  for (const auto& t : config_.towers) towers += (towers.empty() ? "" : ", ") + t;
  spdlog::info("Dafka store {} publishing on {} (advertised as {}:{}){}, towers: {}", address_, endpoint(),
               config_.advertise, config_.port, config_.security.curve() ? " with CURVE" : "",
               towers.empty() ? "(none)" : towers);
  if (config_.towers.empty()) spdlog::warn("Dafka store has no tower: it will discover no peer");
  next_retry_ = Clock::now() + config_.fetch_retry;
  const int stop_fd = reactor_.stop_item().fd;
  poller_.add(stop_fd, [] {});  // ends the loop before any handler runs
  if (config_.sync_wal) {
    wal_sync_ = std::make_unique<WalSyncQueue>(config_.sync_wal);
    poller_.add(
        wal_sync_->fd(), [this] { announce_synced(); }, 0);  // a finished fsync's ACKs first
  }
  poller_.add(
      sub_, [this] { drain_subscriber(); }, 1);  // records first, then
  poller_.add(
      xpub_, [this] { on_subscriptions(); }, 2);  // subscriptions, then
  poller_.add(
      discovery_.subscriber(), [this] { on_discovery(); }, 3);  // the towers' news
  auto turn = [this, stop_fd] {
    poller_.poll(std::chrono::milliseconds(poll_timeout_ms()));
    if (poller_.ready(stop_fd)) return false;
    follow_revocations();  // before this turn's input is handled
    poller_.dispatch();
    on_timer();
    pump_fetches();
    io_vote_.set(fetches_.active());
    return true;
  };
  reactor_.loop("Dafka store", write_error_log_, metrics_.loop_errors, turn);
  announce_unsynced_now();
  poller_.remove(stop_fd);
  spdlog::info(
      "Dafka store stopped: {} record(s) stored, {} duplicate(s), {} refused too far ahead, {} ACK(s), "
      "{} FETCH(es) sent, {} answered with {} DIRECT-RECORD(s), {} malformed, {} invalid",
      metrics_.records_stored.load(), metrics_.duplicates.load(), metrics_.too_far.load(), metrics_.acks_sent.load(),
      metrics_.fetches_sent.load(), metrics_.fetches_served.load(), metrics_.direct_records_sent.load(),
      metrics_.malformed.total(), metrics_.invalid.load());
}

void DafkaStore::report_malformed(const char* where, const protocol::DecodeError& error) {
  metrics_.malformed.count(error.kind);
  bad_input_log_.log(spdlog::level::warn, "Dafka: dropped malformed {} ({}): {}", where,
                     protocol::to_string(error.kind), error.detail);
}

void DafkaStore::report_invalid(const char* what) {
  metrics_.invalid.fetch_add(1, std::memory_order_relaxed);
  bad_input_log_.log(spdlog::level::warn, "Dafka: dropped {}", what);
}

// What the connection watch's byte budget compares each subscriber's
// progress with (connection_watch.h).
template <typename FrameList>
void DafkaStore::count_published(const FrameList& frames) {
  if (!published_) return;
  std::size_t bytes = 0;
  for (const auto& f : frames) bytes += f.size();
  published_->published_bytes.fetch_add(bytes, std::memory_order_relaxed);
}

bool DafkaStore::send(const protocol::Frames& frames) {
  if (try_send(xpub_, frames) == SendOutcome::kSent) {
    count_published(frames);
    return true;
  }
  metrics_.sends_dropped.fetch_add(1, std::memory_order_relaxed);
  return false;
}

void DafkaStore::drain_subscriber() {
  if (unsynced_.size() >= 2) {  // the loop wrote the next batch during the fsync: now it waits
    wal_sync_->wait(unsynced_.front().ticket);
    announce_synced();
  }
  Turn turn;
  std::vector<std::string_view> frames;
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < config_.max_batch && bytes < config_.max_batch_bytes &&
                          transport::try_recv_append(sub_, &turn.parts, &frames);
       ++i) {
    for (auto f : frames) bytes += f.size();
    auto decoded = dafka::decode_borrowing(frames, config_.limits);
    if (!decoded) {
      report_malformed("message", decoded.error());
      continue;
    }
    dispatch(std::move(decoded.value()), &turn);
  }
  commit(&turn);
  if (!turn.later.empty()) announce_unsynced_now();  // they read the log: only what is durable
  for (auto& m : turn.later) {
    if (auto* head = std::get_if<dafka::Head>(&m)) {
      on_head(*head);
    } else if (auto* fetch = std::get_if<dafka::Fetch>(&m)) {
      on_fetch(std::move(*fetch));
    } else if (auto* get = std::get_if<dafka::GetHeads>(&m)) {
      send_heads(get->address, get->topic);
    } else if (auto* hello = std::get_if<dafka::ConsumerHello>(&m)) {
      for (const auto& subject : hello->subjects) send_heads(hello->address, subject);
    }
  }
}

void DafkaStore::take_record(const dafka::RecordView& r, Turn* turn) {
  bool direct = r.id == dafka::MsgId::kDirectRecord;
  if (direct && r.topic != address_) return;  // prefix match: addressed to someone else
  if (!dafka::is_valid_address(r.partition)) {
    return report_invalid(direct ? "DIRECT-RECORD with an invalid partition" : "RECORD with an invalid partition");
  }
  if (!dafka::is_valid_topic_name(r.subject)) {
    return report_invalid(direct ? "DIRECT-RECORD with an invalid topic name" : "RECORD with an invalid topic name");
  }
  if (!admit(r.subject, r.partition, turn)) return;
  turn->records.emplace_back(r.subject, r.partition, r.sequence, r.content);
}

bool DafkaStore::admit(std::string_view subject, std::string_view partition, Turn* turn) {
  if (log_.known(subject, partition)) return true;
  std::pair<std::string_view, std::string_view> key(subject, partition);
  if (turn && turn->admitted.find(key) != turn->admitted.end()) return true;
  // Being FETCHed: admitted when its HEAD (or a refused write) came, so the
  // answer is not counted, or refused, a second time.
  if (gaps_.tracked(Key(subject, partition))) return true;
  PartitionsHeld held{log_.topic_count(), log_.partition_count(), log_.partitions_of(subject)};
  std::uint64_t in_turn = 0;
  if (turn) {
    auto it = turn->admitted_in_topic.find(subject);
    in_turn = it == turn->admitted_in_topic.end() ? 0 : it->second;
    held.topics += turn->admitted_topics;
    held.partitions += turn->admitted.size();
    held.in_topic += in_turn;
  }
  PartitionRefusal refusal = partition_limits_.admit(held, Clock::now());
  if (refusal != PartitionRefusal::kNone) {
    metrics_.refused_by_limit[static_cast<int>(refusal)].fetch_add(1, std::memory_order_relaxed);
    const auto& l = config_.partition_limits;
    std::uint64_t limit = refusal == PartitionRefusal::kTopics              ? l.max_topics
                          : refusal == PartitionRefusal::kPartitions        ? l.max_partitions
                          : refusal == PartitionRefusal::kPartitionsInTopic ? l.max_partitions_per_topic
                                                                            : l.max_new_partitions;
    limits_log_.log(spdlog::level::warn, "Dafka: refused partition {} of '{}' (not stored): past the limit of {} {}{}",
                    partition, subject, limit, to_string(refusal),
                    refusal == PartitionRefusal::kNewPartitions ? " per interval" : "");
    return false;
  }
  if (turn) {
    if (held.in_topic == 0) ++turn->admitted_topics;
    if (in_turn == 0) {
      turn->admitted_in_topic.emplace(std::string(subject), 1);
    } else {
      ++turn->admitted_in_topic.find(subject)->second;
    }
    turn->admitted.emplace(std::string(subject), std::string(partition));
  }
  return true;
}

void DafkaStore::dispatch(dafka::Borrowed&& borrowed, Turn* turn) {
  if (auto* r = std::get_if<dafka::RecordView>(&borrowed)) return take_record(*r, turn);
  auto& msg = std::get<dafka::Message>(borrowed);
  if (auto* h = std::get_if<dafka::Head>(&msg)) {
    if (!dafka::is_valid_address(h->partition)) return report_invalid("HEAD with an invalid partition");
    if (!dafka::is_valid_topic_name(h->subject)) return report_invalid("HEAD with an invalid topic name");
    turn->later.push_back(std::move(msg));
  } else if (auto* f = std::get_if<dafka::Fetch>(&msg)) {
    if (f->address == address_) return;  // our own
    if (!dafka::is_valid_address(f->address) || !dafka::is_valid_address(f->topic)) {
      return report_invalid("FETCH with an invalid address or partition");
    }
    turn->later.push_back(std::move(msg));
  } else if (auto* g = std::get_if<dafka::GetHeads>(&msg)) {
    if (!dafka::is_valid_address(g->address)) return report_invalid("GET-HEADS with an invalid address");
    turn->later.push_back(std::move(msg));
  } else if (auto* w = std::get_if<dafka::ConsumerHello>(&msg)) {
    if (w->topic != address_) return;
    if (!dafka::is_valid_address(w->address)) return report_invalid("CONSUMER-HELLO with an invalid address");
    turn->later.push_back(std::move(msg));
  }
  // ACK, DIRECT-HEAD and STORE-HELLO are not for stores: ignored.
}

void DafkaStore::commit(Turn* turn) {
  if (turn->records.empty()) return;
  std::vector<storage::DafkaAppend> outcomes;
  const auto sync = wal_sync_ ? storage::WriteSync::kByCaller : storage::WriteSync::kByPolicy;
  storage::Status s = log_.append(turn->records, &outcomes, sync);
  if (!s.ok()) return refuse(*turn, s);
  if (refused_since_ok_ > 0) {
    spdlog::warn("Dafka: writes resumed; {} record(s) were refused meanwhile", refused_since_ok_);
    refused_since_ok_ = 0;
  }
  count_outcomes(outcomes);
  Announcement a = announcement(partitions_touched(turn->records), turn->records.size());
  if (wal_sync_) {
    a.ticket = wal_sync_->request();
    unsynced_.push_back(std::move(a));
    return;
  }
  after_store_write("Dafka store", [&] { announce(a); });
}

DafkaStore::Announcement DafkaStore::announcement(std::span<const PartitionTouched> touched, std::size_t records) {
  Announcement a;
  a.records = records;
  for (const auto& p : touched) a.seen.emplace_back(Key(p.subject, p.partition), p.highest);
  auto head_of = [this](std::string_view subject, std::string_view partition) { return log_.head(subject, partition); };
  a.acks = acks_after_batch(touched, head_of);
  return a;
}

void DafkaStore::announce(const Announcement& a) {
  for (const auto& [key, highest] : a.seen) gaps_.note_seen(key, highest);
  for (const auto& ack : a.acks) {
    if (send(dafka::encode(ack))) metrics_.acks_sent.fetch_add(1, std::memory_order_relaxed);
  }
  for (const auto& [key, highest] : a.seen) request_missing(key, false);
}

void DafkaStore::refuse(const Turn& turn, const storage::Status& s) {
  metrics_.write_failures.fetch_add(turn.records.size(), std::memory_order_relaxed);
  refused_since_ok_ += turn.records.size();
  write_error_log_.log(spdlog::level::err, "Dafka: refused {} record(s), not acknowledged: {}", turn.records.size(),
                       s.message());
  // Remembered as gaps: FETCHed again (timer) once writes work again.
  for (const auto& p : partitions_touched(turn.records)) gaps_.note_seen(Key(p.subject, p.partition), p.highest);
}

void DafkaStore::count_outcomes(const std::vector<storage::DafkaAppend>& outcomes) {
  std::uint64_t stored = 0, duplicates = 0, too_far = 0;
  for (auto outcome : outcomes) {
    switch (outcome) {
      case storage::DafkaAppend::kStored:
        ++stored;
        break;
      case storage::DafkaAppend::kDuplicate:
        ++duplicates;
        break;
      case storage::DafkaAppend::kTooFar:
        ++too_far;
        break;
    }
  }
  metrics_.records_stored.fetch_add(stored, std::memory_order_relaxed);
  metrics_.duplicates.fetch_add(duplicates, std::memory_order_relaxed);
  metrics_.too_far.fetch_add(too_far, std::memory_order_relaxed);
}

void DafkaStore::pump_fetches() {
  if (!fetches_.active()) return;
  const auto now = Clock::now();
  std::size_t sent = fetches_.pump(config_.fetch_slice, [this, now](protocol::FrameViews frames) {
    std::uint64_t bytes = 0;
    for (auto f : frames) bytes += f.size();
    if (!fetch_pace_.room(bytes, now) || try_send(xpub_, frames) != SendOutcome::kSent) return false;
    count_published(frames);
    fetch_pace_.spend(bytes);
    return true;
  });
  metrics_.direct_records_sent.fetch_add(sent, std::memory_order_relaxed);
  metrics_.direct_heads_sent.fetch_add(fetches_.trailers_sent() - trailers_counted_, std::memory_order_relaxed);
  trailers_counted_ = fetches_.trailers_sent();
}

void DafkaStore::on_timer() {
  std::vector<PeerChange> changes;
  discovery_.on_timer(&changes);
  apply(changes);
  auto now = Clock::now();
  if (now >= next_monitor_check_) {  // not polled: a busy loop would pay for it every turn
    next_monitor_check_ = now + kMonitorInterval;
    on_sub_events();
  }
  if (now < next_retry_) return;
  next_retry_ = now + config_.fetch_retry;
  std::erase_if(head_acked_, [&](const auto& entry) { return now - entry.second >= kHeadAckInterval; });
  for (const auto& key : gaps_.keys()) request_missing(key, true);
}

}  // namespace zstore::server
