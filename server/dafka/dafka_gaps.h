// GapTracker: which Dafka partitions a store is missing records of, and when
// to FETCH them. It remembers the highest offset seen per partition (from a
// record or a HEAD) and the last FETCH asked; the caller says what the log
// holds (the first offset not stored, the first record kept after a gap).
// A range is asked again only after `retry`; when the timer has asked the
// same range `max_retries` times the tracker says to give up on it. Not
// thread-safe: owned by the store's reactor.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "storage/dafka/dafka_log.h"

namespace zstore::server {

class GapTracker {
 public:
  using Clock = std::chrono::steady_clock;
  using Key = storage::DafkaPartitionKey;

  GapTracker(std::chrono::milliseconds retry, int max_retries) : retry_(retry), max_retries_(max_retries) {}

  // offset was seen in a record or HEAD of key: tracks key, raises its highest.
  void note_seen(const Key& key, std::uint64_t offset);
  bool tracked(const Key& key) const { return gaps_.find(key) != gaps_.end(); }
  std::optional<std::uint64_t> highest_seen(const Key& key) const;

  enum class Action {
    kNone,    // nothing missing right now, or asked less than `retry` ago
    kFetch,   // FETCH *missing, then call asked()
    kGiveUp,  // the timer asked *missing max_retries times: skip it
  };
  struct Range {
    std::uint64_t from = 0;
    std::uint64_t end = 0;  // exclusive
  };
  // What to do about key, whose log holds everything below from and whose
  // first record kept after a gap (if any) is after_gap. The missing range
  // is [from, after_gap), else [from, highest seen]; when it is empty the key
  // is no longer tracked. from_timer: the retry timer asks (counts retries).
  Action next(const Key& key, std::uint64_t from, std::optional<std::uint64_t> after_gap, bool from_timer,
              Clock::time_point now, Range* missing);
  // A FETCH from `from` was sent at now.
  void asked(const Key& key, std::uint64_t from, bool from_timer, Clock::time_point now);
  // The gap was skipped: the next range starts with fresh retries.
  void reset_retries(const Key& key);
  void forget(const Key& key) { gaps_.erase(key); }
  std::vector<Key> keys() const;
  std::size_t size() const { return gaps_.size(); }

 private:
  struct Gap {
    std::uint64_t highest = 0;
    bool has_highest = false;
    std::uint64_t asked_from = ~std::uint64_t{0};
    Clock::time_point asked_at{};
    int retries = 0;
  };
  std::chrono::milliseconds retry_;
  int max_retries_;
  std::map<Key, Gap> gaps_;
};

}  // namespace zstore::server
