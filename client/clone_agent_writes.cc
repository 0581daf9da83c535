// CloneAgent's confirmed writes (CloneClient::write): WRITE? on a DEALER to
// the server in use, answered there by WRITTEN (protocol/chp_writes.h).
#include <algorithm>

#include "client/clone_agent.h"
#include "protocol/chp_writes.h"
#include "transport/zmq_frames.h"

namespace zstore::client {

namespace chp = protocol::chp;
using Kind = WriteOutcome::Kind;

namespace {
constexpr std::size_t kWriteFrames = 6;
constexpr std::size_t kUuidFrame = 3;
}  // namespace

void CloneAgent::take_write(protocol::Frames request) {
  if (request.size() != kWriteFrames) return;
  std::string uuid = request[kUuidFrame];
  if (writes_taken_ == WritesTaken::kNo) {
    state_.confirmed_writes().resolve(uuid, {Kind::kFailed, 0,
                                             "server " + servers_[current_].address +
                                                 " does not take confirmed writes (no writes=1): "
                                                 "not sent"});
    return;
  }
  writes_[uuid] = InFlight{std::move(request), false, {}};  // a retry replaces the entry: sent again now
  send_writes();
}

// After the session's snapshot: a server that announced writes=1 gets this
// session's WRITE?s; any other fails them without sending (the Guide's
// servers would misread a WRITE?, and a conditional write must never
// become a plain KVSET).
void CloneAgent::open_writer(bool takes_writes) {
  writer_.close();
  if (!takes_writes) {
    writes_taken_ = WritesTaken::kNo;
    for (const auto& [uuid, w] : writes_) {
      state_.confirmed_writes().resolve(uuid, {Kind::kFailed, 0,
                                               "server " + servers_[current_].address +
                                                   " does not take confirmed writes (no writes=1): "
                                                   "not sent"});
    }
    writes_.clear();
    return;
  }
  writes_taken_ = WritesTaken::kYes;
  writer_ = watch(make_socket(zmq::socket_type::dealer));
  writer_.socket().connect(servers_[current_].snapshot);
  for (auto& [uuid, w] : writes_) w.sent = false;
  send_writes();
}

void CloneAgent::send_writes() {
  if (writes_taken_ != WritesTaken::kYes || !writer_) return;
  const auto now = Clock::now();
  for (auto it = writes_.begin(); it != writes_.end();) {
    if (it->second.sent) {
      ++it;
      continue;
    }
    if (!state_.confirmed_writes().wanted(it->first)) {
      it = writes_.erase(it);
      continue;
    }
    if (transport::try_send(writer_.socket(), it->second.request) != transport::SendOutcome::kSent) {
      flush_retry_ = now + std::chrono::milliseconds(10);  // the socket is full: again soon
      return;
    }
    it->second.sent = true;
    it->second.resend_at = now + options_.failover_timeout;
    ++it;
  }
}

void CloneAgent::on_writer() {
  for (std::size_t n = 0; n < 256 && writer_; ++n) {
    transport::Message msg;
    if (!transport::try_recv(writer_.socket(), &msg)) break;
    heard_from(current_);
    auto written = chp::decode_written(msg.frames());
    if (!written) {
      count_malformed(written.error());
      continue;
    }
    auto it = writes_.find(written->uuid);
    if (it == writes_.end()) continue;  // answered before (a re-send's second answer)
    if (written->kind == chp::WriteOutcome::Kind::kNotActive) {
      // A Binary Star passive: the session fails over to the active (it
      // sends no HUGZ); until then ask again now and then.
      it->second.resend_at = Clock::now() + vote_interval();
      continue;
    }
    Kind kind = written->kind == chp::WriteOutcome::Kind::kApplied   ? Kind::kApplied
                : written->kind == chp::WriteOutcome::Kind::kRefused ? Kind::kRefused
                : written->kind == chp::WriteOutcome::Kind::kUnknown ? Kind::kUnknown
                                                                     : Kind::kFailed;
    state_.confirmed_writes().resolve(written->uuid, {kind, written->sequence, std::move(written->detail)});
    writes_.erase(it);
  }
}

// A write sent and not answered for failover_timeout (or answered
// not-active) is sent again, same UUID: applied at most once.
void CloneAgent::write_timers(Clock::time_point now) {
  bool again = false;
  for (auto& [uuid, w] : writes_) {
    if (w.sent && now >= w.resend_at) {
      w.sent = false;
      again = true;
    }
  }
  if (again) send_writes();
}

std::optional<CloneAgent::Clock::time_point> CloneAgent::next_write_deadline() const {
  std::optional<Clock::time_point> next;
  for (const auto& [uuid, w] : writes_) {
    if (w.sent && (!next || w.resend_at < *next)) next = w.resend_at;
  }
  return next;
}

}  // namespace zstore::client
