#include "tools/torture_src/chp_writers.h"

#include <chrono>
#include <random>

#include "protocol/chp_codec.h"

namespace zstore::torture {

namespace chp = protocol::chp;

namespace {

std::string random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

void send_frames(zmq::socket_t& s, const protocol::Frames& frames) {
  for (std::size_t i = 0; i < frames.size(); ++i) {
    auto flags =
        i + 1 < frames.size() ? (zmq::send_flags::sndmore | zmq::send_flags::dontwait) : zmq::send_flags::dontwait;
    (void)s.send(zmq::buffer(frames[i]), flags);  // PUB never blocks; a full pipe drops
  }
}

// One op for key: 15% deletes, 15% sets with ttl 1..4 s, else plain sets.
// Values are unique (writer, counter) plus random binary filler.
ChpOp make_op(std::mt19937_64& rng, int id, std::uint64_t counter) {
  ChpOp op;
  op.uuid = random_bytes(rng, chp::kUuidSize);
  int kind = static_cast<int>(rng() % 100);
  if (kind < 15) return op;
  op.value = "w" + std::to_string(id) + "-" + std::to_string(counter) + "-" + random_bytes(rng, rng() % 48);
  if (kind < 30) op.ttl_s = 1 + rng() % 4;
  return op;
}

}  // namespace

ChpWriters::ChpWriters(zmq::context_t& ctx, std::vector<std::string> collectors, ChpHistory& history,
                       WriterOptions options)
    : ctx_(ctx), collectors_(std::move(collectors)), history_(history), options_(options) {
  for (int i = 0; i < options_.writers; ++i) threads_.emplace_back([this, i] { run(i); });
}

ChpWriters::~ChpWriters() {
  stop_ = true;
  for (auto& t : threads_) t.join();
}

void ChpWriters::pause() {
  paused_ = true;
  while (parked_.load() < options_.writers) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void ChpWriters::resume() { paused_ = false; }

void ChpWriters::run(int id) {
  std::mt19937_64 rng(options_.seed * 1000003 + static_cast<std::uint64_t>(id));
  zmq::socket_t pub(ctx_, zmq::socket_type::pub);
  pub.set(zmq::sockopt::linger, 0);
  pub.set(zmq::sockopt::immediate, 1);
  for (std::size_t i = 0; i < collectors_.size(); ++i) {
    bool mine =
        !options_.one_side || static_cast<std::size_t>(id) >= collectors_.size() || i == static_cast<std::size_t>(id);
    if (mine) pub.connect(collectors_[i]);
  }
  std::uint64_t counter = 0;
  bool parked = false;
  while (!stop_) {
    if (paused_) {
      if (!parked) parked_++, parked = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      continue;
    }
    if (parked) parked_--, parked = false;
    int burst = 1 + static_cast<int>(rng() % 6);
    for (int b = 0; b < burst; ++b) {
      // One op in 20 goes to a key that only ever gets ttl sets, so ttls
      // regularly run out (and across restarts) instead of being overwritten.
      bool ttl_key = rng() % 20 == 0;
      std::string key = "/torture/w" + std::to_string(id) + (ttl_key ? "/t" : "/k") +
                        std::to_string(rng() % (ttl_key ? options_.ttl_keys_per_writer : options_.keys_per_writer));
      ChpOp op = make_op(rng, id, ++counter);
      if (ttl_key && op.ttl_s == 0) {
        if (op.value.empty()) op.value = "t" + std::to_string(id) + "-" + std::to_string(counter);
        op.ttl_s = 1 + rng() % 2;
      }
      std::string props = op.ttl_s ? "ttl=" + std::to_string(op.ttl_s) + "\n" : "";
      chp::KvMsg msg{key, 0, op.uuid, props, op.value};
      op.sent_ms = now_ms();
      history_.record(key, op);
      send_frames(pub, chp::encode_kvmsg(msg));
      sent_++;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2 + rng() % 14));
  }
  if (parked) parked_--;
}

}  // namespace zstore::torture
