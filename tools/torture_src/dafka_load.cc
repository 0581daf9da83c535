#include "tools/torture_src/dafka_load.h"

#include <optional>
#include <random>

namespace zstore::torture {

namespace dafka = client::dafka;
using namespace std::chrono_literals;

namespace {

dafka::ProducerOptions producer_options(dafka::NodeOptions node) {
  dafka::ProducerOptions o;
  o.node = std::move(node);
  o.head_interval = 200ms;
  return o;
}

}  // namespace

dafka::NodeOptions DafkaLoad::node() const {
  dafka::NodeOptions o;
  o.towers = towers_;
  o.beacon_interval = 200ms;
  o.peer_timeout = 2000ms;
  return o;
}

DafkaLoad::DafkaLoad(std::vector<std::string> towers, std::uint64_t seed)
    : towers_(std::move(towers)), seed_(seed), producer_(producer_options(node())) {
  thread_ = std::thread([this] { run(); });
}

DafkaLoad::~DafkaLoad() {
  stop_ = true;
  thread_.join();
}

std::uint64_t DafkaLoad::published() const {
  std::lock_guard lock(mu_);
  return contents_.size();
}

std::uint64_t DafkaLoad::acked() const {
  std::lock_guard lock(mu_);
  return acked_;
}

void DafkaLoad::run() {
  std::mt19937_64 rng(seed_ ^ 0xDAF4A);
  while (!stop_) {
    int batch = 1 + static_cast<int>(rng() % 10);
    std::uint64_t upto = 0;
    for (int b = 0; b < batch; ++b) {
      std::string content(1 + rng() % 200, '\0');
      for (auto& c : content) c = static_cast<char>(rng() & 0xff);
      std::lock_guard lock(mu_);
      std::uint64_t offset = producer_.publish(topic_, content);
      if (offset != contents_.size()) throw std::logic_error("producer offsets out of step");
      contents_.push_back(std::move(content));
      upto = contents_.size();
    }
    if (producer_.flush(1000ms)) {
      std::lock_guard lock(mu_);
      acked_ = std::max(acked_, upto);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50 + rng() % 100));
  }
}

std::uint64_t DafkaLoad::verify(std::uint64_t want, std::chrono::milliseconds timeout, Violations& violations) {
  want = std::min(want, acked());
  if (want == 0) return 0;
  dafka::ConsumerOptions o;
  o.node = node();
  o.reset = dafka::ConsumerOptions::Reset::kEarliest;
  o.fetch_retry = 200ms;
  o.get_heads_retry = 300ms;
  dafka::Consumer consumer(o);
  consumer.subscribe({topic_});
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::uint64_t next = 0;
  while (next < want) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left <= 0ms) break;
    auto r = consumer.poll(std::min(left, 500ms));
    if (!r || r->partition != producer_.address()) continue;
    if (r->offset != next) {
      violations.add("dafka order", "replayed offset " + std::to_string(r->offset) + " where " + std::to_string(next) +
                                        " was expected");
      return next;
    }
    std::lock_guard lock(mu_);
    if (contents_[next] != r->content) {
      violations.add("dafka corrupt", "offset " + std::to_string(next) + " content differs from what was published (" +
                                          std::to_string(r->content.size()) + " vs " +
                                          std::to_string(contents_[next].size()) + " bytes)");
    }
    ++next;
  }
  if (next < want) {
    violations.add("dafka lost", "ACKed offsets " + std::to_string(next) + ".." + std::to_string(want - 1) +
                                     " not replayed within " + std::to_string(timeout.count()) + " ms");
  }
  return next;
}

}  // namespace zstore::torture
