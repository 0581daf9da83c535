#include "tools/bench/conditional.h"

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "protocol/chp_writes.h"

namespace zstore::bench {

namespace chp = protocol::chp;

// How long a writer waits for a WRITTEN before it sends the write again.
constexpr std::chrono::seconds kResendAfter{1};

class WriteOutlet : public Outlet {
 public:
  WriteOutlet(ConditionalTransport& owner, int writer)
      : owner_(owner),
        socket_(owner.context_, zmq::socket_type::dealer),
        letter_(static_cast<char>('a' + writer % 26)) {
    socket_.set(zmq::sockopt::sndhwm, 0);
    socket_.set(zmq::sockopt::rcvhwm, 0);
    socket_.set(zmq::sockopt::linger, 0);
    owner.security_.as_client(socket_);
    socket_.connect(owner.snapshot_);
  }

  // frames: a KVSET from make_message (key, seq, uuid, properties, body).
  void send(const protocol::Frames& frames) override {
    std::string key = frames.at(0);
    key[0] = letter_;
    std::string uuid = frames.at(2);
    if (uuid.size() != chp::kUuidSize) throw std::runtime_error("conditional writes need the load's UUIDs");
    // The retries of message 0 (until the receiver sees it) reuse its uuid.
    // Once that write is applied the server answers a retry from memory and
    // publishes nothing more: a receiver that joined after its KVPUB would
    // wait for ever. So a retry after the answer is a new write of the key.
    if (first_uuid_.empty()) first_uuid_ = uuid;
    if (uuid == first_uuid_ && sequences_.contains(key) && !pending_.contains(key)) {
      uuid.back() = static_cast<char>(uuid.back() ^ static_cast<char>(++handshake_retries_));
    }
    if (auto previous = pending_.find(key); previous != pending_.end() && previous->second.uuid != uuid) {
      wait_for_answer(key);
    }
    chp::Precondition precondition;
    if (auto known = sequences_.find(key); known != sequences_.end()) {
      precondition = {chp::Precondition::Kind::kSequence, known->second};
    } else {
      precondition.kind = chp::Precondition::Kind::kAbsent;
    }
    // The key has no unanswered write now, or this one again (message 0).
    Pending& pending = pending_[key];
    if (pending.uuid != uuid) {
      pending.uuid = uuid;
      key_by_uuid_[uuid] = key;
    }
    pending.write = chp::encode_write(key, uuid, frames.at(3), frames.at(4), precondition);
    send_frames(socket_, pending.write);
    if (++sends_ % 32 == 0) tick();  // the load calls tick() only every 1,024 sends
  }

  void tick() override {
    while (take_answer(std::chrono::milliseconds(0))) {
    }
  }
  const std::string& partition() const override { return partition_; }

 private:
  // The server drops a WRITTEN it cannot queue to this writer (counted in
  // zstore_chp_written_unsent_total) and does not send it again: after
  // kResendAfter without it the write goes again, with its uuid, and the
  // server answers that retry of an applied write from what it remembers
  // (docs/chp-extensions.md).
  void wait_for_answer(const std::string& key) {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    auto resend_at = Clock::now() + kResendAfter;
    while (pending_.count(key) != 0) {
      auto now = Clock::now();
      if (now > deadline) throw std::runtime_error("no WRITTEN for 30 s");
      if (now >= resend_at) {
        send_frames(socket_, pending_.at(key).write);
        owner_.resent_++;
        resend_at = now + kResendAfter;
      }
      take_answer(std::chrono::milliseconds(100));
    }
  }

  // One WRITTEN, if one comes within `timeout` (0: only one already here,
  // taken without a poll: a poll per answer cost the writer a syscall each).
  bool take_answer(std::chrono::milliseconds timeout) {
    if (timeout.count() > 0) {
      zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
      if (zmq::poll(&item, 1, timeout) <= 0) return false;
    }
    std::size_t n = 0;
    do {
      if (n == parts_.size()) parts_.emplace_back();
      auto flags = n == 0 ? zmq::recv_flags::dontwait : zmq::recv_flags::none;  // the rest came with the first
      if (!socket_.recv(parts_[n], flags)) return false;
    } while (parts_[n++].more());
    views_.clear();
    for (std::size_t i = 0; i < n; ++i) views_.emplace_back(parts_[i].data<char>(), parts_[i].size());
    auto decoded = chp::decode_written(views_);
    if (!decoded.ok()) {
      owner_.failed_++;
      return true;
    }
    note(decoded.value());
    return true;
  }

  void note(const chp::WriteOutcome& outcome) {
    auto it = key_by_uuid_.find(outcome.uuid);
    if (it == key_by_uuid_.end()) return;  // an answer to a retry already answered
    const std::string key = it->second;
    key_by_uuid_.erase(it);
    if (auto p = pending_.find(key); p != pending_.end() && p->second.uuid == outcome.uuid) pending_.erase(p);
    switch (outcome.kind) {
      case chp::WriteOutcome::Kind::kApplied:
        owner_.applied_++;
        sequences_[key] = outcome.sequence;
        break;
      case chp::WriteOutcome::Kind::kRefused:
        owner_.refused_++;
        sequences_[key] = outcome.sequence;
        break;
      default:
        owner_.failed_++;
        break;
    }
  }

  ConditionalTransport& owner_;
  zmq::socket_t socket_;
  std::vector<zmq::message_t> parts_;  // an answer's, kept from answer to answer
  std::vector<std::string_view> views_;
  char letter_;
  std::uint64_t sends_ = 0;
  std::string partition_;
  std::string first_uuid_;  // message 0's
  std::uint8_t handshake_retries_ = 0;
  std::unordered_map<std::string, std::uint64_t> sequences_;  // key -> its sequence, as last answered
  // A key's unanswered write: its uuid, and the write as sent (sent again
  // when its answer does not come).
  struct Pending {
    std::string uuid;
    protocol::Frames write;
  };
  std::unordered_map<std::string, Pending> pending_;          // by key
  std::unordered_map<std::string, std::string> key_by_uuid_;  // unanswered writes
};

ConditionalTransport::ConditionalTransport(zmq::context_t& context, std::string snapshot, std::string publisher,
                                           security::SocketSecurity security)
    : PubSubTransport(context, std::vector<std::string>{}, std::vector<std::string>{std::move(publisher)}, security),
      context_(context),
      snapshot_(std::move(snapshot)),
      security_(std::move(security)) {}

std::unique_ptr<Outlet> ConditionalTransport::open(int writer) { return std::make_unique<WriteOutlet>(*this, writer); }

}  // namespace zstore::bench
