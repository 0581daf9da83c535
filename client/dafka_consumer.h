// Dafka consumer: receives the records of its topics from producers and
// stores, in order per partition, without duplicates.
//
// Per (topic, partition) it tracks the next expected offset. A record at that
// offset is delivered; a later one is buffered (up to max_buffered per
// partition) and the missing range is FETCHed, again every fetch_retry until
// the gap is filled; an earlier one is a duplicate and ignored. A HEAD or
// DIRECT-HEAD beyond what was delivered FETCHes too. With Reset::kEarliest a
// new partition starts at offset 0 and GET-HEADS is sent on subscribe (and
// repeated until a DIRECT-HEAD for the topic arrives or get_heads_for
// passes); with Reset::kLatest it starts at the first offset seen.
// A gap still open after skip_gap_after FETCHes while later records are
// buffered is skipped: delivery goes on from the first buffered record. A
// store whose retention deleted the start of a partition answers a FETCH
// below its floor from the floor on, so this is how the consumer moves past
// what no longer exists instead of FETCHing it for ever.
//
// Thread-safety: every member function may be called from any thread. A
// background agent thread owns the sockets; delivered records wait in an
// unbounded queue until poll() takes them.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/dafka_options.h"

namespace zstore::client::dafka {

struct ConsumerOptions {
  enum class Reset { kLatest, kEarliest };
  NodeOptions node;
  Reset reset = Reset::kLatest;
  std::chrono::milliseconds fetch_retry{500};
  std::chrono::milliseconds get_heads_retry{1000};
  std::chrono::milliseconds get_heads_for{30000};
  std::size_t max_buffered = 10000;  // out-of-order records kept per partition
  int skip_gap_after = 4;            // FETCHes of one gap, with records buffered after it, before it is skipped
};

struct Record {
  std::string topic;
  std::string partition;  // the producer's address
  std::uint64_t offset = 0;
  std::string content;
  bool operator==(const Record&) const = default;
};

class Consumer {
 public:
  // Binds the publisher and starts discovery; never waits for a tower.
  // Throws std::invalid_argument on a malformed tower endpoint and
  // zmq::error_t when the publisher cannot bind.
  explicit Consumer(ConsumerOptions options = {});
  ~Consumer();
  Consumer(const Consumer&) = delete;
  Consumer& operator=(const Consumer&) = delete;

  // Adds topics (exact names; "hello" does not receive "hello2"). Throws
  // std::invalid_argument for an empty topic, one with a NUL byte or one
  // longer than 255 bytes. Subscribing twice to a topic is harmless.
  void subscribe(const std::vector<std::string>& topics);

  // The next delivered record, waiting up to `timeout`; nullopt on time-out.
  std::optional<Record> poll(std::chrono::milliseconds timeout);

  // Waits until a store greeted this consumer (STORE-HELLO answered with
  // CONSUMER-HELLO). False on time-out.
  [[nodiscard]] bool wait_connected(std::chrono::milliseconds timeout);

  const std::string& address() const;   // 32 uppercase hex characters
  const std::string& endpoint() const;  // where its publisher is bound
  // Why the latest handshake with a tower failed (with CURVE: our key refused
  // by zstored's --curve-allow, or security.server_key not zstored's key;
  // CURVE on one side only), as "CURVE handshake with tcp://...: ...", or
  // empty while none failed since a tower last spoke to us. Handshakes are
  // retried: a key added to the allow list later works at the next attempt.
  std::string handshake_error() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zstore::client::dafka
