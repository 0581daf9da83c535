// DafkaLoad: a producer thread publishing records with random binary
// contents to one topic in small batches, each followed by flush(): when a
// flush succeeds, every record published before it is ACKed by a store and
// must never be lost. verify() replays the topic from the beginning with a
// fresh consumer and checks every ACKed record, in order and byte-exact.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/dafka_consumer.h"
#include "client/dafka_producer.h"
#include "tools/torture_src/violations.h"

namespace zstore::torture {

class DafkaLoad {
 public:
  DafkaLoad(std::vector<std::string> towers, std::uint64_t seed);
  ~DafkaLoad();
  DafkaLoad(const DafkaLoad&) = delete;
  DafkaLoad& operator=(const DafkaLoad&) = delete;

  std::uint64_t published() const;
  std::uint64_t acked() const;
  // Replays the first `want` records (want <= acked()); returns how many
  // were checked (all of them unless a violation was added).
  std::uint64_t verify(std::uint64_t want, std::chrono::milliseconds timeout, Violations& violations);

 private:
  void run();
  client::dafka::NodeOptions node() const;

  std::vector<std::string> towers_;
  std::uint64_t seed_;
  std::string topic_ = "torture";
  client::dafka::Producer producer_;
  mutable std::mutex mu_;
  std::vector<std::string> contents_;  // by offset
  std::uint64_t acked_ = 0;            // offsets < acked_ are ACKed
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace zstore::torture
