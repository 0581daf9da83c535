// zstore-peer-load: the load generator tools/bench-peers runs against the
// stores compared with zstored (Redis, NATS JetStream, etcd), each through
// its own client library, with zstore-bench's load shape: --writers
// threads, each with at most --window writes not yet acknowledged, values
// of --value-bytes over --key-space random keys, warm-up then a measured
// window. A watcher counts the changes it received (map workloads) or the
// store counts the records kept (log workloads).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace zstore::peer_load {

struct Spec {
  std::string workload;  // redis-pubsub, redis-stream, redis-log, nats-kv, nats-log, etcd
  int port = 0;
  int writers = 2;
  int window = 1000;
  int etcd_inflight = 64;
  double warmup_s = 1;
  double duration_s = 8;
  std::size_t value_bytes = 100;
  std::uint64_t key_space = 100000;
};

std::int64_t now_ns();

// The measured window, in now_ns() time, and when writers stop sending.
struct Phases {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  bool sending(std::int64_t t) const { return t < end_ns; }
};

// One writer's acknowledgements: counts them and keeps the latency of
// those acknowledged inside the measured window.
class Recorder {
 public:
  explicit Recorder(const Phases& phases) : phases_(phases) {}
  void ack(std::int64_t sent_ns);
  void fail() { ++failed_; }
  std::uint64_t acked() const { return acked_; }
  std::uint64_t window_acked() const { return window_acked_; }
  std::uint64_t failed() const { return failed_; }
  const std::vector<std::uint32_t>& latencies_us() const { return latencies_us_; }

 private:
  static constexpr std::size_t kMaxSamples = 50'000'000;
  const Phases& phases_;
  std::uint64_t acked_ = 0, window_acked_ = 0, failed_ = 0;
  std::vector<std::uint32_t> latencies_us_;
};

// Keys and values of one writer.
class Keys {
 public:
  Keys(std::uint64_t key_space, unsigned seed) : space_(key_space), rng_(seed) {}
  std::string next() { return "key:" + std::to_string(space_ == 0 ? n_++ : rng_() % space_); }

 private:
  std::uint64_t space_;
  std::uint64_t n_ = 0;
  std::mt19937_64 rng_;
};

// What a workload reports: the watcher's (or the store's) count of
// changes seen, after every writer has stopped.
struct Watch {
  std::atomic<std::uint64_t> received{0};
  std::atomic<bool> stop{false};
  std::atomic<bool> ready{false};  // set once the watcher would see a write
};

// A workload: setup() once, then writer(i, recorder) on its own thread
// per writer and watcher(watch) on one more (may return at once for log
// workloads); kept() after the writers end gives the count to compare
// with the acks (the watcher's received, or the records the store holds).
struct Workload {
  virtual ~Workload() = default;
  virtual void setup() = 0;
  virtual void writer(int index, Recorder& recorder, const Phases& phases) = 0;
  virtual void watcher(Watch& watch) = 0;
  virtual std::uint64_t kept(const Watch& watch) { return watch.received.load(); }
  virtual std::string durability() const = 0;
};

std::unique_ptr<Workload> make_redis(const Spec& spec);
std::unique_ptr<Workload> make_nats(const Spec& spec);
std::unique_ptr<Workload> make_etcd(const Spec& spec);

// A value of spec.value_bytes bytes: printable filler (etcd and Redis
// store it as is).
std::string make_value(const Spec& spec);

}  // namespace zstore::peer_load
