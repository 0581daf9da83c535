#include "tools/bench/conditional.h"

#include <algorithm>
#include <array>
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
    key_.assign(frames.at(0));
    key_[0] = letter_;
    std::string_view uuid = frames.at(2);
    if (uuid.size() != chp::kUuidSize) throw std::runtime_error("conditional writes need the load's UUIDs");
    KeyState& state = keys_.try_emplace(key_).first->second;
    // The retries of message 0 (until the receiver sees it) reuse its uuid.
    // Once that write is applied the server answers a retry from memory and
    // publishes nothing more: a receiver that joined after its KVPUB would
    // wait for ever. So a retry after the answer is a new write of the key.
    if (first_uuid_.empty()) first_uuid_ = uuid;
    uuid_.assign(uuid);
    if (uuid == first_uuid_ && state.answered && !state.pending) {
      uuid_.back() = static_cast<char>(uuid_.back() ^ static_cast<char>(++handshake_retries_));
    }
    if (state.pending && state.uuid != uuid_) wait_for_answer(state);
    chp::Precondition precondition;
    if (state.answered) {
      precondition = {chp::Precondition::Kind::kSequence, state.sequence};
    } else {
      precondition.kind = chp::Precondition::Kind::kAbsent;
    }
    // The key has no unanswered write now, or this one again (message 0).
    if (!state.pending) {
      state.pending = true;
      state.uuid = uuid_;
      by_uuid_[uuid_key(uuid_)] = &state;
    }
    chp::encode_write(key_, uuid_, frames.at(3), frames.at(4), precondition, state.write);
    send_frames(socket_, state.write);
    if (++sends_ % 32 == 0) tick();  // the load calls tick() only every 1,024 sends
  }

  void tick() override {
    while (take_answer(std::chrono::milliseconds(0))) {
    }
  }
  const std::string& partition() const override { return partition_; }

 private:
  // A key's state: what its last answer said, and its unanswered write
  // (sent again when its answer does not come). Kept for the run, so a
  // write reuses its key's buffers.
  struct KeyState {
    bool answered = false;       // a write of the key was answered
    std::uint64_t sequence = 0;  // the key's sequence, as last answered
    bool pending = false;        // a write of the key is unanswered
    std::string uuid;            // that write's
    protocol::Frames write;      // as sent
  };
  using UuidKey = std::array<char, chp::kUuidSize>;
  struct UuidHash {
    std::size_t operator()(const UuidKey& u) const {
      std::uint64_t a, b;
      std::memcpy(&a, u.data(), 8);
      std::memcpy(&b, u.data() + 8, 8);
      return std::hash<std::uint64_t>{}(a * 0x9E3779B97F4A7C15ULL ^ b);
    }
  };
  static UuidKey uuid_key(std::string_view uuid) {
    UuidKey key{};
    std::memcpy(key.data(), uuid.data(), std::min(uuid.size(), key.size()));
    return key;
  }

  // The server drops a WRITTEN only past the bounds of what waits for a
  // writer (counted in zstore_chp_written_unsent_total): after kResendAfter
  // without it the write goes again, with its uuid, and the server answers
  // that retry of an applied write from what it remembers
  // (docs/chp-extensions.md).
  void wait_for_answer(const KeyState& state) {
    using Clock = std::chrono::steady_clock;
    owner_.waited_++;
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    auto resend_at = Clock::now() + kResendAfter;
    while (state.pending) {
      auto now = Clock::now();
      if (now > deadline) throw std::runtime_error("no WRITTEN for 30 s");
      if (now >= resend_at) {
        send_frames(socket_, state.write);
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
    auto it = by_uuid_.find(uuid_key(outcome.uuid));
    if (it == by_uuid_.end()) return;  // an answer to a retry already answered
    KeyState& state = *it->second;
    by_uuid_.erase(it);
    if (state.pending && state.uuid == outcome.uuid) state.pending = false;
    switch (outcome.kind) {
      case chp::WriteOutcome::Kind::kApplied:
        owner_.applied_++;
        break;
      case chp::WriteOutcome::Kind::kRefused:
        owner_.refused_++;
        break;
      default:
        owner_.failed_++;
        return;
    }
    state.answered = true;
    state.sequence = outcome.sequence;
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
  std::string key_, uuid_;  // the write being sent
  std::unordered_map<std::string, KeyState> keys_;
  std::unordered_map<UuidKey, KeyState*, UuidHash> by_uuid_;  // unanswered writes (nodes are stable)
};

ConditionalTransport::ConditionalTransport(zmq::context_t& context, std::string snapshot, std::string publisher,
                                           security::SocketSecurity security)
    : PubSubTransport(context, std::vector<std::string>{}, std::vector<std::string>{std::move(publisher)}, security),
      context_(context),
      snapshot_(std::move(snapshot)),
      security_(std::move(security)) {}

std::unique_ptr<Outlet> ConditionalTransport::open(int writer) { return std::make_unique<WriteOutlet>(*this, writer); }

}  // namespace zstore::bench
