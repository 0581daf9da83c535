#include "client/dafka_producer.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <variant>

#include "client/dafka_node.h"
#include "protocol/dafka_codec.h"

namespace zstore::client::dafka {

namespace wire = protocol::dafka;

namespace {

constexpr std::chrono::hours kIdle{1};

struct TopicState {
  std::uint64_t next = 0;                     // next sequence to assign
  std::optional<std::uint64_t> acked;         // highest cumulative ACK
  std::map<std::uint64_t, std::string> kept;  // unacknowledged records
  Clock::time_point next_head{};
  bool progressed = false;  // an ACK since the last HEAD
  bool all_acked() const { return next == 0 || (acked && *acked + 1 >= next); }
};

}  // namespace

class Producer::Impl final : public DafkaNode::Handler {
 public:
  explicit Impl(const ProducerOptions& options) : head_interval_(options.head_interval), node_(options.node) {
    node_.subscribe(wire::subscription(wire::MsgId::kAck, node_.address()));
    node_.subscribe(wire::subscription(wire::MsgId::kFetch, node_.address()));
    node_.subscribe(wire::subscription(wire::MsgId::kDirectHead, node_.address()));
    node_.start(*this);
  }

  ~Impl() override { node_.stop(); }

  std::uint64_t publish(const std::string& topic, std::string content) {
    if (topic.empty() || !wire::is_valid_topic(topic) || !wire::fits_short_string(topic))
      throw std::invalid_argument("Dafka topic must be 1..255 bytes without NUL");
    std::uint64_t seq;
    {
      std::lock_guard lock(mu_);
      auto& t = topics_[topic];
      seq = t.next++;
      t.kept.emplace(seq, std::move(content));
      if (seq == 0) t.next_head = Clock::now() + head_interval_;
      outbox_.emplace_back(topic, seq);
    }
    node_.wake();
    return seq;
  }

  bool flush(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [this] {
      return std::all_of(topics_.begin(), topics_.end(), [](const auto& kv) { return kv.second.all_acked(); });
    });
  }

  bool wait_connected(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [this] { return store_connected_; });
  }

  std::size_t unacked() const {
    std::lock_guard lock(mu_);
    std::size_t n = 0;
    for (const auto& [_, t] : topics_) n += t.kept.size();
    return n;
  }

  const std::string& address() const { return node_.address(); }
  const std::string& endpoint() const { return node_.endpoint(); }
  std::string handshake_error() const { return node_.handshake_error(); }

  // --- agent thread ---

  void on_wakeup() override {
    std::lock_guard lock(mu_);
    while (!outbox_.empty()) {
      auto [topic, seq] = std::move(outbox_.front());
      outbox_.pop_front();
      auto& t = topics_[topic];
      auto it = t.kept.find(seq);
      if (it == t.kept.end()) continue;  // already acknowledged
      node_.send(wire::Record{topic, address(), topic, seq, it->second});
    }
  }

  Clock::time_point on_timer(Clock::time_point now) override {
    std::lock_guard lock(mu_);
    auto due = now + kIdle;
    for (auto& [topic, t] : topics_) {
      if (t.next == 0) continue;
      if (now >= t.next_head) {
        node_.send(wire::Head{topic, address(), topic, t.next - 1});
        // A store ACKs a record once; if that ACK was lost (our SUB was not
        // connected to the store yet) ask the stores for their heads instead.
        if (!t.kept.empty() && !t.progressed) node_.send(wire::GetHeads{topic, address()});
        t.progressed = false;
        t.next_head = now + head_interval_;
      }
      due = std::min(due, t.next_head);
    }
    return due;
  }

  void on_message(wire::Message msg) override {
    if (auto* ack = std::get_if<wire::Ack>(&msg)) {
      if (ack->topic == address()) on_ack(*ack);
    } else if (auto* head = std::get_if<wire::DirectHead>(&msg)) {
      // Only a store reports a head for our partition: it has stored up to
      // there, which is what a cumulative ACK says.
      if (head->topic == address() && head->partition == address())
        on_ack(wire::Ack{address(), head->subject, head->sequence});
    } else if (auto* fetch = std::get_if<wire::Fetch>(&msg)) {
      if (fetch->topic == address()) on_fetch(*fetch);
    }
  }

  void on_subscription(bool subscribe, std::string_view topic) override {
    // A store subscribes to every FETCH ("F"); anything subscribing to FETCHes
    // for our partition can serve as the store we wait for.
    if (topic.empty() || topic[0] != static_cast<char>(wire::MsgId::kFetch)) return;
    if (!std::string_view(address()).starts_with(topic.substr(1))) return;
    std::lock_guard lock(mu_);
    store_connected_ = subscribe;
    cv_.notify_all();
  }

 private:
  void on_ack(const wire::Ack& ack) {
    std::lock_guard lock(mu_);
    auto it = topics_.find(ack.subject);
    if (it == topics_.end() || it->second.next == 0) return;
    auto& t = it->second;
    std::uint64_t seq = std::min(ack.sequence, t.next - 1);  // an ACK beyond what we sent is bogus
    if (t.acked && *t.acked >= seq) return;
    t.acked = seq;
    t.progressed = true;
    t.kept.erase(t.kept.begin(), t.kept.upper_bound(seq));
    cv_.notify_all();
  }

  void on_fetch(const wire::Fetch& fetch) {
    if (!wire::fits_short_string(fetch.address) || !wire::is_valid_topic(fetch.address)) return;
    std::lock_guard lock(mu_);
    auto it = topics_.find(fetch.subject);
    if (it == topics_.end() || fetch.count == 0) return;
    const auto& kept = it->second.kept;
    std::uint64_t end = fetch.sequence + fetch.count;
    if (end < fetch.sequence) end = UINT64_MAX;  // overflow
    for (auto r = kept.lower_bound(fetch.sequence); r != kept.end() && r->first < end; ++r)
      node_.send(wire::DirectRecord{fetch.address, address(), fetch.subject, r->first, r->second});
  }

  const std::chrono::milliseconds head_interval_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, TopicState> topics_;
  std::deque<std::pair<std::string, std::uint64_t>> outbox_;
  bool store_connected_ = false;
  DafkaNode node_;  // last: its thread stops before the state above goes
};

Producer::Producer(ProducerOptions options) : impl_(std::make_unique<Impl>(options)) {}
Producer::~Producer() = default;
std::uint64_t Producer::publish(const std::string& topic, std::string content) {
  return impl_->publish(topic, std::move(content));
}
bool Producer::flush(std::chrono::milliseconds timeout) { return impl_->flush(timeout); }
bool Producer::wait_connected(std::chrono::milliseconds timeout) { return impl_->wait_connected(timeout); }
const std::string& Producer::address() const { return impl_->address(); }
const std::string& Producer::endpoint() const { return impl_->endpoint(); }
std::string Producer::handshake_error() const { return impl_->handshake_error(); }
std::size_t Producer::unacked() const { return impl_->unacked(); }

}  // namespace zstore::client::dafka
