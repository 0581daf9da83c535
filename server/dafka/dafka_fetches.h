// FetchPump: answers FETCHes from disk, a slice per loop turn, so a FETCH
// for a million records never stalls the reactor. Each session reads its
// range with a DafkaCursor and sends DIRECT-RECORDs addressed to the
// requester, ascending, exactly the records stored in the range, then the
// session's trailer if it has one. A send that
// would block keeps its message and pauses the pump until the next turn.
// Owned and driven by one reactor thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "protocol/frames.h"
#include "server/reactor/log.h"
#include "storage/dafka/dafka_log.h"

namespace zstore::server {

// SendPace: at most bytes_per_window in each window (and at least one
// message, however large), so the pump, which reads the log faster than any
// connection takes it, cannot put more than that in the XPUB's queues
// between two of the connection watch's checks of the byte budget
// (connection_watch.h). bytes_per_window 0: no pace.
class SendPace {
 public:
  using Clock = std::chrono::steady_clock;
  SendPace(std::uint64_t bytes_per_window, std::chrono::milliseconds window)
      : bytes_per_window_(bytes_per_window), window_(window) {}
  // Whether bytes may leave now; spend() them once they did.
  bool room(std::uint64_t bytes, Clock::time_point now) {
    if (bytes_per_window_ == 0) return true;
    if (now >= window_end_) {
      window_end_ = now + window_;
      used_ = 0;
    }
    return used_ == 0 || used_ + bytes <= bytes_per_window_;
  }
  void spend(std::uint64_t bytes) { used_ += bytes; }

 private:
  std::uint64_t bytes_per_window_;
  std::chrono::milliseconds window_;
  Clock::time_point window_end_{};
  std::uint64_t used_ = 0;
};

class FetchPump {
 public:
  // send returns false when the message would block (nothing was sent).
  using Send = std::function<bool(protocol::FrameViews)>;
  explicit FetchPump(std::size_t max_sessions) : max_sessions_(max_sessions) {}

  // Queues a session; false (nothing queued) when max_sessions are active.
  // A non-empty trailer is sent once after the session's last record (the
  // store's DIRECT-HEAD after an answer short of its head).
  bool start(std::string requester, std::unique_ptr<storage::DafkaCursor> cursor, protocol::Frames trailer = {});
  // Sends up to `budget` messages round-robin over sessions; returns how
  // many were sent. Stops early on would-block (see blocked()).
  std::size_t pump(std::size_t budget, const Send& send);

  // Trailers sent since construction.
  std::uint64_t trailers_sent() const { return trailers_sent_; }
  bool active() const { return !sessions_.empty(); }
  bool blocked() const { return blocked_; }
  void clear() { sessions_.clear(); }

 private:
  struct Session {
    std::string requester;
    std::unique_ptr<storage::DafkaCursor> cursor;
    storage::DafkaRecordView record;  // the last record read, where the cursor holds it
    std::string header;               // its DIRECT-RECORD header frame
    std::string header_partition;     // the partition and subject header was encoded for
    std::string header_subject;
    bool pending = false;  // record is read but not yet sent (the cursor waits: its view stays valid)
    bool done = false;     // every record sent; the trailer is what is left
    protocol::Frames trailer;
  };
  // Reads the next record and writes its header unless one is pending;
  // false when the session is done. A record of the partition of the last
  // header only gets its sequence rewritten.
  bool load_next(Session& s);

  std::size_t max_sessions_;
  std::deque<Session> sessions_;
  bool blocked_ = false;
  std::uint64_t trailers_sent_ = 0;
  RateLimiter error_log_;  // read errors, one per FETCH
};

}  // namespace zstore::server
