#include "client/dafka_consumer.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <utility>
#include <variant>

#include "client/dafka_node.h"
#include "protocol/dafka_codec.h"

namespace zstore::client::dafka {

namespace wire = protocol::dafka;
using Reset = ConsumerOptions::Reset;

namespace {

constexpr std::chrono::hours kIdle{1};

// One (subject, partition): what was delivered and what is known to exist.
struct Partition {
  std::uint64_t next = 0;                       // next offset to deliver
  std::optional<std::uint64_t> known;           // highest offset known to exist
  std::map<std::uint64_t, std::string> buffer;  // out-of-order records, all > next
  Clock::time_point fetch_due{};                // earliest time of the next FETCH
  std::uint64_t fetched_from = 0;               // the gap of the last FETCH, and how often it was asked
  int fetches = 0;
  bool has_gap() const { return known && *known >= next; }
};

struct TopicState {
  Clock::time_point get_heads_until{};  // GET-HEADS repeats until then
  Clock::time_point next_get_heads{};
};

void check_topic(const std::string& topic) {
  if (topic.empty() || !wire::is_valid_topic(topic) || !wire::fits_short_string(topic))
    throw std::invalid_argument("Dafka topic must be 1..255 bytes without NUL");
}

}  // namespace

class Consumer::Impl final : public DafkaNode::Handler {
 public:
  explicit Impl(const ConsumerOptions& options) : options_(options), node_(options.node) {
    const auto& me = node_.address();
    node_.subscribe(wire::subscription(wire::MsgId::kDirectRecord, me));
    node_.subscribe(wire::subscription(wire::MsgId::kDirectHead, me));
    node_.subscribe(wire::subscription(wire::MsgId::kStoreHello, me));
    node_.start(*this);
  }

  ~Impl() override { node_.stop(); }

  void subscribe(const std::vector<std::string>& topics) {
    for (const auto& t : topics) check_topic(t);
    {
      std::lock_guard lock(mu_);
      pending_topics_.insert(pending_topics_.end(), topics.begin(), topics.end());
    }
    node_.wake();
  }

  std::optional<Record> poll(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, timeout, [this] { return !delivered_.empty(); })) return std::nullopt;
    Record r = std::move(delivered_.front());
    delivered_.pop_front();
    return r;
  }

  bool wait_connected(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [this] { return connected_; });
  }

  const std::string& address() const { return node_.address(); }
  const std::string& endpoint() const { return node_.endpoint(); }
  std::string handshake_error() const { return node_.handshake_error(); }

  // --- agent thread ---

  void on_wakeup() override {
    std::vector<std::string> added;
    {
      std::lock_guard lock(mu_);
      added.swap(pending_topics_);
    }
    auto now = Clock::now();
    for (auto& topic : added) {
      if (topics_.count(topic)) continue;
      node_.subscribe(wire::subscription(wire::MsgId::kRecord, topic));
      node_.subscribe(wire::subscription(wire::MsgId::kHead, topic));
      auto& t = topics_[topic];
      if (options_.reset == Reset::kEarliest) {
        t.get_heads_until = now + options_.get_heads_for;
        t.next_get_heads = now;  // sent by on_timer right away
      }
      // Stores that greeted us before learn the new subject.
      for (const auto& store : stores_) send_consumer_hello(store);
    }
  }

  Clock::time_point on_timer(Clock::time_point now) override {
    auto due = now + kIdle;
    for (auto& [topic, t] : topics_) {
      if (now >= t.get_heads_until) continue;
      if (now >= t.next_get_heads) {
        node_.send(wire::GetHeads{topic, address()});
        t.next_get_heads = now + options_.get_heads_retry;
      }
      due = std::min(due, t.next_get_heads);
    }
    for (auto& [key, p] : partitions_) {
      if (!p.has_gap()) continue;
      if (now >= p.fetch_due) fetch(key, p, now);
      due = std::min(due, p.fetch_due);
    }
    return due;
  }

  void on_message(wire::Message msg) override {
    auto now = Clock::now();
    std::visit(
        [&](auto& m) {
          using T = std::decay_t<decltype(m)>;
          if constexpr (std::is_same_v<T, wire::Record>) {
            if (m.topic == m.subject && topics_.count(m.subject))
              on_record(m.subject, m.partition, m.sequence, std::move(m.content), now);
          } else if constexpr (std::is_same_v<T, wire::DirectRecord>) {
            if (m.topic == address() && topics_.count(m.subject))
              on_record(m.subject, m.partition, m.sequence, std::move(m.content), now);
          } else if constexpr (std::is_same_v<T, wire::Head>) {
            if (m.topic == m.subject && topics_.count(m.subject)) on_head(m.subject, m.partition, m.sequence, now);
          } else if constexpr (std::is_same_v<T, wire::DirectHead>) {
            auto it = topics_.find(m.subject);
            if (m.topic == address() && it != topics_.end()) {
              it->second.get_heads_until = now;  // a store or producer answered
              on_head(m.subject, m.partition, m.sequence, now);
            }
          } else if constexpr (std::is_same_v<T, wire::StoreHello>) {
            if (m.topic == address()) on_store_hello(m.address);
          }
        },
        msg);
  }

  void on_subscription(bool subscribe, std::string_view topic) override {
    if (!subscribe || topic.empty()) return;
    if (topic[0] == static_cast<char>(wire::MsgId::kConsumerHello)) {
      // A greeting store's SUB just reached our publisher: the CONSUMER-HELLO
      // sent on its STORE-HELLO may have been lost, send it again.
      auto store = std::string(topic.substr(1));
      if (stores_.count(store)) send_consumer_hello(store);
    } else if (topic == std::string_view("G", 1)) {
      // A store can hear GET-HEADS now.
      auto now = Clock::now();
      for (auto& [name, t] : topics_)
        if (now < t.get_heads_until) node_.send(wire::GetHeads{name, address()});
    }
  }

 private:
  using Key = std::pair<std::string, std::string>;  // subject, partition

  Partition& partition(const std::string& subject, const std::string& part, std::uint64_t first_seen, bool* created) {
    auto [it, inserted] = partitions_.try_emplace(Key{subject, part});
    *created = inserted;
    if (inserted) it->second.next = options_.reset == Reset::kEarliest ? 0 : first_seen;
    return it->second;
  }

  void on_record(const std::string& subject, const std::string& part, std::uint64_t seq, std::string content,
                 Clock::time_point now) {
    if (!wire::is_valid_address(part)) return;
    bool created;
    auto& p = partition(subject, part, seq, &created);
    if (seq < p.next) return;  // duplicate
    p.known = std::max(p.known.value_or(0), seq);
    if (seq > p.next) {
      if (p.buffer.size() < options_.max_buffered || p.buffer.count(seq)) p.buffer[seq] = std::move(content);
      if (now >= p.fetch_due) fetch(Key{subject, part}, p, now);
      return;
    }
    std::vector<Record> out;
    out.push_back(Record{subject, part, seq, std::move(content)});
    ++p.next;
    deliver_buffered(subject, part, p, std::move(out));
  }

  // Delivers out and the buffered records that follow p.next without a gap.
  void deliver_buffered(const std::string& subject, const std::string& part, Partition& p, std::vector<Record> out) {
    while (!p.buffer.empty() && p.buffer.begin()->first <= p.next) {
      auto node = p.buffer.extract(p.buffer.begin());
      if (node.key() == p.next) {
        out.push_back(Record{subject, part, node.key(), std::move(node.mapped())});
        ++p.next;
      }
    }
    if (!p.has_gap()) p.fetch_due = {};
    if (out.empty()) return;
    std::lock_guard lock(mu_);
    for (auto& r : out) delivered_.push_back(std::move(r));
    cv_.notify_all();
  }

  void on_head(const std::string& subject, const std::string& part, std::uint64_t seq, Clock::time_point now) {
    if (!wire::is_valid_address(part)) return;
    bool created;
    auto& p = partition(subject, part, seq == std::numeric_limits<std::uint64_t>::max() ? seq : seq + 1, &created);
    if (seq < p.next) return;
    p.known = std::max(p.known.value_or(0), seq);
    if (p.has_gap() && now >= p.fetch_due) fetch(Key{subject, part}, p, now);
  }

  void fetch(const Key& key, Partition& p, Clock::time_point now) {
    p.fetches = p.fetched_from == p.next ? p.fetches + 1 : 1;
    p.fetched_from = p.next;
    if (p.fetches > options_.skip_gap_after && !p.buffer.empty()) {
      // Nobody has the gap (a store's retention deleted it, or it was lost):
      // go on from the first record after it.
      p.next = p.buffer.begin()->first;
      p.fetches = 0;
      deliver_buffered(key.first, key.second, p, {});
      if (!p.has_gap()) return;
    }
    std::uint64_t end = p.buffer.empty() ? *p.known + 1 : p.buffer.begin()->first;  // exclusive
    std::uint64_t count = std::min<std::uint64_t>(end - p.next, std::numeric_limits<std::uint32_t>::max());
    node_.send(wire::Fetch{key.second, address(), key.first, p.next, static_cast<std::uint32_t>(count)});
    p.fetch_due = now + options_.fetch_retry;
  }

  void on_store_hello(const std::string& store) {
    if (!wire::fits_short_string(store) || !wire::is_valid_topic(store) || store.empty()) return;
    stores_.insert(store);
    send_consumer_hello(store);
    std::lock_guard lock(mu_);
    connected_ = true;
    cv_.notify_all();
  }

  void send_consumer_hello(const std::string& store) {
    std::vector<std::string> subjects;
    for (const auto& [name, _] : topics_) subjects.push_back(name);
    node_.send(wire::ConsumerHello{store, address(), std::move(subjects)});
  }

  const ConsumerOptions options_;

  // Shared with API threads, under mu_.
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> pending_topics_;
  std::deque<Record> delivered_;
  bool connected_ = false;

  // Agent thread only.
  std::map<std::string, TopicState> topics_;
  std::map<Key, Partition> partitions_;
  std::set<std::string> stores_;

  DafkaNode node_;  // last: its thread stops before the state above goes
};

Consumer::Consumer(ConsumerOptions options) : impl_(std::make_unique<Impl>(options)) {}
Consumer::~Consumer() = default;
void Consumer::subscribe(const std::vector<std::string>& topics) { impl_->subscribe(topics); }
std::optional<Record> Consumer::poll(std::chrono::milliseconds timeout) { return impl_->poll(timeout); }
bool Consumer::wait_connected(std::chrono::milliseconds timeout) { return impl_->wait_connected(timeout); }
const std::string& Consumer::address() const { return impl_->address(); }
const std::string& Consumer::endpoint() const { return impl_->endpoint(); }
std::string Consumer::handshake_error() const { return impl_->handshake_error(); }

}  // namespace zstore::client::dafka
