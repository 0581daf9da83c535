// Dafka producer: publishes records into its own partition (its node
// address) and keeps each one until a store acknowledges it.
//
// Records are RECORD messages (topic = subject = the topic name, partition =
// this producer's address, sequence numbers per topic from 0). After the
// first record of a topic a HEAD with the last sequence goes out every
// head_interval, so stores that missed records FETCH them; the producer
// answers FETCH from its unacknowledged records and forgets records once any
// store sends a cumulative ACK covering them. A store ACKs a record only once,
// so when unacknowledged records make no progress for a head_interval the
// producer also sends GET-HEADS for the topic: a store's DIRECT-HEAD for this
// producer's partition counts as a cumulative ACK.
//
// Thread-safety: every member function may be called from any thread. A
// background agent thread owns the sockets.
//
// Durability: publish() only queues. A record is durable once flush()
// returned true (some store ACKed it). Destroying the producer drops records
// that are still unacknowledged, without waiting: call flush() first.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "client/dafka_options.h"

namespace zstore::client::dafka {

struct ProducerOptions {
  NodeOptions node;
  std::chrono::milliseconds head_interval{1000};
};

class Producer {
 public:
  // Binds the publisher and starts discovery; never waits for a tower.
  // Throws std::invalid_argument on a malformed tower endpoint and
  // zmq::error_t when the publisher cannot bind.
  explicit Producer(ProducerOptions options = {});
  ~Producer();
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  // Queues `content` as the next record of `topic` and returns its offset
  // (sequence number). Throws std::invalid_argument for an empty topic, a
  // topic with a NUL byte or one longer than 255 bytes.
  std::uint64_t publish(const std::string& topic, std::string content);

  // Waits until every record published so far is ACKed by at least one
  // store. False on time-out (the records are still kept and re-offered).
  [[nodiscard]] bool flush(std::chrono::milliseconds timeout);

  // Waits until a store subscribed to this producer's FETCH messages, i.e.
  // a store is connected to the publisher. False on time-out.
  [[nodiscard]] bool wait_connected(std::chrono::milliseconds timeout);

  // This producer's address: its partition name, 32 uppercase hex characters.
  const std::string& address() const;
  // The endpoint its publisher is bound to ("tcp://127.0.0.1:40123").
  const std::string& endpoint() const;
  // Why the latest handshake with a tower failed (with CURVE: our key refused
  // by zstored's --curve-allow, or security.server_key not zstored's key;
  // CURVE on one side only), as "CURVE handshake with tcp://...: ...", or
  // empty while none failed since a tower last spoke to us. Handshakes are
  // retried: a key added to the allow list later works at the next attempt.
  std::string handshake_error() const;
  // Records published and not yet acknowledged.
  std::size_t unacked() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zstore::client::dafka
