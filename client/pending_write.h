// PendingWrite: the handle of one confirmed write of a CloneClient
// (CloneClient::write, write_erase, retry): its UUID, and its outcome once
// a server answered. Copies share the outcome; thread-safe. While any copy
// lives the client keeps sending the write (same UUID) until a server
// answers it, across failovers; a server applies one UUID at most once.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace zstore::client {

struct WriteOutcome {
  enum class Kind : std::uint8_t {
    kApplied,  // sequence: the write's; stored under the server's sync policy and published (in a
               // joined Binary Star pair also stored by the passive: docs/high-availability.md)
    kRefused,  // the precondition did not hold; sequence: the key's current (0 = absent)
    kFailed,   // not applied and never will be: detail says why (ACL, malformed, storage, or the
               // server does not take confirmed writes: no writes=1, e.g. the Guide's servers)
    kUnknown,  // no answer by the deadline: it may or may not have been applied
  };
  Kind kind = Kind::kUnknown;
  std::uint64_t sequence = 0;
  std::string detail;
};

const char* to_string(WriteOutcome::Kind kind);

// How a confirmed write is made: a precondition (none, if-seq=N, if-absent)
// and a TTL for a set (0 = none).
struct WriteOptions {
  struct Precondition {
    enum class Kind : std::uint8_t { kNone, kSequence, kAbsent };
    Kind kind = Kind::kNone;
    std::uint64_t sequence = 0;  // kSequence: the key's sequence must be this
  };
  Precondition precondition;
  std::uint64_t ttl_seconds = 0;

  static WriteOptions if_sequence(std::uint64_t sequence) { return {{Precondition::Kind::kSequence, sequence}, 0}; }
  static WriteOptions if_absent() { return {{Precondition::Kind::kAbsent, 0}, 0}; }
};

class PendingWrite {
 public:
  struct State;  // shared with the client's agent (write_waiters.h)
  explicit PendingWrite(std::shared_ptr<State> state) : state_(std::move(state)) {}

  // The write's UUID: a retry (CloneClient::retry) sends it again.
  const std::string& uuid() const;
  // Blocks until the outcome is known or the deadline; kUnknown then (the
  // client goes on trying while the handle lives: wait again, or retry).
  WriteOutcome wait(std::chrono::steady_clock::time_point deadline) const;
  WriteOutcome wait_for(std::chrono::milliseconds timeout) const {
    return wait(std::chrono::steady_clock::now() + timeout);
  }
  // The outcome if known now.
  std::optional<WriteOutcome> outcome() const;
  const std::shared_ptr<State>& state() const { return state_; }

 private:
  std::shared_ptr<State> state_;
};

}  // namespace zstore::client
