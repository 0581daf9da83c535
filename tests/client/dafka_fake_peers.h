// Scripted fake Dafka peers for the producer and consumer tests.
//
// FakeTower: XSUB at tcp://127.0.0.1:P, XPUB at P+1 (P from free_port_range),
// sends the welcome "W" to each subscriber, forwards subscriptions upstream
// except W, and turns 4-frame node beacons into 3-frame tower beacons.
//
// FakeStore: a store-like node with its own address: an XPUB (verbose) that it
// beacons through the tower, and a SUB subscribed like the reference store
// (M, H, F, G all; D and W + own address) which the test connects to the
// node under test, or which follows the tower's beacons with discover=true. It answers an L+address subscription with
// STORE-HELLO, records everything it receives, and in auto mode behaves like the reference store (stores seq == head+1,
// FETCHes gaps and HEADs beyond its head, sends cumulative ACKs). Tests send arbitrary messages with send(). Each fake
// runs one thread; everything public is thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "protocol/dafka_messages.h"

namespace zstore::testing {

class FakeTower {
 public:
  FakeTower();
  ~FakeTower();
  FakeTower(const FakeTower&) = delete;
  FakeTower& operator=(const FakeTower&) = delete;
  // "tcp://127.0.0.1:P", as a node's tower option.
  std::string endpoint() const;
  int beacons_seen() const { return beacons_.load(); }

 private:
  void run();
  std::uint16_t port_;
  std::atomic<bool> stop_{false};
  std::atomic<int> beacons_{0};
  std::thread thread_;
};

class FakeStore {
 public:
  // Beacons to `tower` every 100 ms. With auto_store, acts as the reference store.
  FakeStore(const std::string& tower, bool auto_store, bool discover = false);
  ~FakeStore();
  FakeStore(const FakeStore&) = delete;
  FakeStore& operator=(const FakeStore&) = delete;

  const std::string& address() const { return address_; }
  // Connects the store's SUB to a node's publisher endpoint.
  void connect(const std::string& endpoint);
  void send(const protocol::dafka::Message& msg);
  // Every message received so far, in arrival order.
  std::vector<protocol::dafka::Message> received() const;
  // Received messages of type T.
  template <typename T>
  std::vector<T> received_of() const {
    std::vector<T> out;
    for (auto& m : received())
      if (auto* p = std::get_if<T>(&m)) out.push_back(*p);
    return out;
  }
  // Stored contents of one partition (auto mode), by sequence.
  std::vector<std::string> stored(const std::string& partition) const;
  // Every partition's stored contents.
  std::map<std::string, std::vector<std::string>> stored_all() const;
  void set_auto(bool on) { auto_.store(on); }
  // Whether some node subscribed to `topic` on the store's XPUB.
  bool has_subscription(const std::string& topic) const;

 private:
  void run();
  void handle(const protocol::dafka::Message& msg, std::vector<protocol::dafka::Message>& out);

  std::string address_;
  std::string tower_;
  std::atomic<bool> auto_;
  bool discover_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::vector<std::string> connects_;
  std::vector<std::string> subscriptions_;
  std::vector<protocol::dafka::Message> outbox_;
  std::vector<protocol::dafka::Message> received_;
  std::map<std::string, std::vector<std::string>> stored_;  // partition -> contents
  std::thread thread_;
};

}  // namespace zstore::testing
