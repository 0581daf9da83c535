#include "tools/bench/load.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "protocol/chp_codec.h"
#include "protocol/dafka_codec.h"

namespace zstore::bench {

namespace chp = protocol::chp;
namespace dafka = protocol::dafka;

namespace {

std::string make_body(const LoadSpec& spec, int writer, std::uint64_t n) {
  std::string body(spec.value_bytes, 'v');
  std::int64_t sent = now_ns();
  auto id = static_cast<std::uint32_t>(spec.run) << 16 | static_cast<std::uint32_t>(writer);
  std::memcpy(body.data(), &sent, 8);
  std::memcpy(body.data() + 8, &id, 4);
  std::memcpy(body.data() + 12, &n, 8);
  return body;
}

// splitmix64's finaliser: a bijection on 64-bit values whose outputs look
// uniform, so index mod key_space is uniform over the key space.
std::uint64_t scatter(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

std::string make_key(const LoadSpec& spec, int writer, std::uint64_t n) {
  std::uint64_t index = n * static_cast<std::uint64_t>(spec.writers) + static_cast<std::uint64_t>(writer);
  if (spec.random_keys) index = scatter(index);
  if (spec.key_space > 0) index %= spec.key_space;
  char key[32];
  std::snprintf(key, sizeof key, "%c%u/%013llu", spec.key_letter, static_cast<unsigned>(index % 10),
                static_cast<unsigned long long>(index % 10000000000000ull));
  return key;
}

protocol::Frames make_message(const LoadSpec& spec, int writer, std::uint64_t n, const std::string& partition) {
  if (spec.shape == Shape::kChp) {
    std::string uuid;
    if (spec.chp_uuids) {
      std::uint64_t tag = static_cast<std::uint64_t>(spec.run) << 16 | static_cast<std::uint64_t>(writer);
      uuid.assign(chp::kUuidSize, '\0');
      std::memcpy(uuid.data(), &tag, 8);
      std::memcpy(uuid.data() + 8, &n, 8);
    }
    return {make_key(spec, writer, n), std::string(chp::kSequenceSize, '\0'), std::move(uuid), "",
            make_body(spec, writer, n)};
  }
  return dafka::encode(dafka::Record{kBenchTopic, partition, kBenchTopic, n, make_body(spec, writer, n)});
}

bool read_body(std::string_view body, std::int64_t& sent_ns, std::uint32_t& writer, std::uint64_t& n) {
  if (body.size() < kMinValueBytes) return false;
  std::memcpy(&sent_ns, body.data(), 8);
  std::memcpy(&writer, body.data() + 8, 4);
  std::memcpy(&n, body.data() + 12, 8);
  return true;
}

void send_frames(zmq::socket_t& socket, const protocol::Frames& frames) {
  for (std::size_t i = 0; i < frames.size(); ++i) {
    auto flags = i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
    if (!socket.send(zmq::buffer(frames[i]), flags)) throw std::runtime_error("send would block");
  }
}

Board::Board(int writers, std::uint64_t window, std::uint16_t run)
    : slots_(static_cast<std::size_t>(writers)), window_(window), run_(run) {
  for (Slot& slot : slots_) slot.send_ns = std::make_unique<std::atomic<std::int64_t>[]>(window);
}

void Board::record_send(int writer, std::uint64_t n, std::int64_t sent_ns) {
  slots_[static_cast<std::size_t>(writer)].send_ns[n % window_].store(sent_ns, std::memory_order_relaxed);
}

void Board::set_window(std::int64_t start_ns, std::int64_t end_ns) {
  window_start_ = start_ns;
  window_end_ = end_ns;
}

bool Board::complete_tagged(std::uint32_t tag, std::uint64_t n, std::int64_t now, std::int64_t sent_ns) {
  if (tag >> 16 != run_) return false;
  complete(static_cast<int>(tag & 0xffff), n, now, sent_ns);
  return true;
}

void Board::complete(int writer, std::uint64_t n, std::int64_t now, std::int64_t sent_ns) {
  if (writer < 0 || writer >= writers()) return;
  Slot& slot = slots_[static_cast<std::size_t>(writer)];
  std::uint64_t before = slot.done.load(std::memory_order_relaxed);
  if (n + 1 <= before) return;  // a duplicate (a repeated first message, a re-ACK)
  bool in_window = now >= window_start_.load() && now < window_end_.load();
  for (std::uint64_t i = before; i <= n; ++i) {
    std::int64_t sent = sent_ns >= 0 && i == n ? sent_ns : slot.send_ns[i % window_].load(std::memory_order_relaxed);
    if (sent > 0) latencies_.add(now, now - sent);
  }
  if (in_window) window_completed_ += n + 1 - before;
  slot.done.store(n + 1, std::memory_order_release);
}

namespace {

using Clock = std::chrono::steady_clock;

struct Shared {
  const LoadSpec& spec;
  Transport& transport;
  Board& board;
  std::mutex mutex;
  std::vector<std::string> partitions;
  std::atomic<int> opened{0};
  std::atomic<int> ready{0};  // handshakes done
  std::atomic<bool> go{false};
  std::atomic<std::uint64_t> sent{0};
  std::atomic<bool> halt{false};  // stop sending; the run ends once what was sent arrived
  std::atomic<int> halted{0};     // writers that saw halt (or ran out) and send no more
  std::string error;              // first writer failure
};

std::uint64_t share_of(const LoadSpec& spec, int writer) {
  auto writers = static_cast<std::uint64_t>(spec.writers);
  return spec.total / writers + (static_cast<std::uint64_t>(writer) < spec.total % writers ? 1 : 0);
}

void handshake(Shared& shared, Outlet& outlet, int writer) {
  auto deadline = Clock::now() + std::chrono::seconds(30);
  while (shared.board.done(writer) == 0) {
    if (Clock::now() > deadline || shared.board.stop) throw std::runtime_error("the first message never came through");
    shared.board.record_send(writer, 0, now_ns());
    outlet.send(make_message(shared.spec, writer, 0, outlet.partition()));
    outlet.tick();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void write_loop(Shared& shared, Outlet& outlet, int writer) {
  const LoadSpec& spec = shared.spec;
  std::uint64_t limit = spec.total > 0 ? share_of(spec, writer) : UINT64_MAX;
  double per_writer = spec.rate / spec.writers;
  auto start = Clock::now();
  for (std::uint64_t n = 1; n < limit && !shared.board.stop && !shared.halt; ++n) {
    if (per_writer > 0) {
      auto due = start + std::chrono::nanoseconds(static_cast<std::int64_t>(static_cast<double>(n) * 1e9 / per_writer));
      std::this_thread::sleep_until(due);
    }
    while (n - shared.board.done(writer) >= spec.window && !shared.board.stop && !shared.halt) {
      outlet.tick();
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    std::int64_t sent = now_ns();
    shared.board.record_send(writer, n, sent);
    outlet.send(make_message(spec, writer, n, outlet.partition()));
    shared.sent.fetch_add(1, std::memory_order_relaxed);
    if ((n & 1023) == 0) outlet.tick();
  }
  ++shared.halted;
  // Keep beacons going until the run ends (a Dafka store must stay attached).
  while (!shared.board.stop) {
    outlet.tick();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void writer_thread(Shared& shared, int writer) {
  try {
    std::unique_ptr<Outlet> outlet = shared.transport.open(writer);
    {
      std::lock_guard<std::mutex> lock(shared.mutex);
      shared.partitions[static_cast<std::size_t>(writer)] = outlet->partition();
    }
    ++shared.opened;
    while (!shared.go && !shared.board.stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    handshake(shared, *outlet, writer);
    shared.sent.fetch_add(1);
    ++shared.ready;
    write_loop(shared, *outlet, writer);
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(shared.mutex);
    if (shared.error.empty()) shared.error = "writer " + std::to_string(writer) + ": " + e.what();
    shared.board.stop = true;
  }
}

std::uint64_t total_done(const Board& board) {
  std::uint64_t sum = 0;
  for (int w = 0; w < board.writers(); ++w) sum += board.done(w);
  return sum;
}

// Waits for `cond` while watching for failures and stalls; false if stopped.
template <typename Cond>
bool wait_for(Shared& shared, Cond cond, const std::atomic<bool>* external_stop) {
  std::uint64_t last = total_done(shared.board);
  auto progress = Clock::now();
  while (!cond()) {
    if (shared.board.stop || (external_stop != nullptr && external_stop->load())) return false;
    std::uint64_t now_done = total_done(shared.board);
    if (now_done != last) {
      last = now_done;
      progress = Clock::now();
    } else if (Clock::now() - progress > std::chrono::seconds(30)) {
      std::lock_guard<std::mutex> lock(shared.mutex);
      if (shared.error.empty()) shared.error = "no progress for 30 s";
      shared.board.stop = true;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

// Lets what was sent arrive before the sockets close: libzmq 4.3 aborts the
// process ("Resource temporarily unavailable (src/session_base.cpp:260)")
// when a connection closes while a session is part-way through a multipart
// message, which a run that ends with messages in flight invited. Bounded:
// a paced PUB/SUB run past a high-water mark may have lost some.
void quiesce(Shared& shared) {
  auto deadline = Clock::now() + std::chrono::seconds(2);
  // Every writer stopped (one that passed its halt check before halt was
  // set still sends a message, and counts it after), and all it sent arrived.
  auto settled = [&] {
    return shared.halted.load() >= shared.ready.load() && total_done(shared.board) >= shared.sent.load();
  };
  while (!shared.board.stop && !settled() && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

LoadResult run_load(const LoadSpec& given, Transport& transport, const std::atomic<bool>* external_stop) {
  static std::atomic<std::uint16_t> runs{static_cast<std::uint16_t>(now_ns())};
  LoadSpec spec = given;
  spec.run = runs.fetch_add(1);
  Board board(spec.writers, spec.window, spec.run);
  Shared shared{spec, transport, board, {}, std::vector<std::string>(static_cast<std::size_t>(spec.writers)),
                {},   {},        {},    {}, {},
                {},   {}};
  std::vector<std::thread> writers;
  for (int w = 0; w < spec.writers; ++w) writers.emplace_back(writer_thread, std::ref(shared), w);
  std::thread receiver;
  if (wait_for(
          shared, [&] { return shared.opened == spec.writers; }, external_stop)) {
    receiver = std::thread([&] { transport.receive(board, shared.partitions); });
    shared.go = true;
  }
  LoadResult result;
  if (wait_for(
          shared, [&] { return shared.ready == spec.writers; }, external_stop)) {
    auto warmup = static_cast<std::int64_t>(spec.warmup_s * 1e9);
    result.window_start_ns = now_ns() + (spec.total > 0 ? 0 : warmup);
    result.window_end_ns =
        spec.total > 0 ? INT64_MAX : result.window_start_ns + static_cast<std::int64_t>(spec.duration_s * 1e9);
    board.set_window(result.window_start_ns, result.window_end_ns);
    if (spec.total > 0) {
      wait_for(
          shared, [&] { return total_done(board) >= spec.total; }, external_stop);
    } else {
      wait_for(
          shared, [&] { return now_ns() >= result.window_end_ns; }, external_stop);
    }
    result.window_end_ns = std::min(result.window_end_ns, now_ns());
  }
  result.window_completed = board.window_completed();
  shared.halt = true;
  quiesce(shared);
  board.stop = true;
  for (std::thread& t : writers) t.join();
  if (receiver.joinable()) receiver.join();
  if (!shared.error.empty()) throw std::runtime_error(shared.error);
  result.window_seconds = static_cast<double>(result.window_end_ns - result.window_start_ns) / 1e9;
  result.sent = shared.sent;
  result.completed = total_done(board);
  result.latencies = board.take_latencies();
  return result;
}

LoadSpec background_writer_spec(std::size_t value_bytes, double rate) {
  LoadSpec writer;
  writer.writers = 1;
  writer.value_bytes = value_bytes;
  writer.rate = rate;
  writer.key_letter = 'w';
  writer.key_space = 1000;
  writer.warmup_s = 0;
  writer.duration_s = 3600;
  return writer;
}

BackgroundLoad::BackgroundLoad(const LoadSpec& spec, Transport& transport)
    : thread_([this, spec, &transport] {
        try {
          result_ = run_load(spec, transport, &stop_);
        } catch (const std::exception& e) {
          error_ = e.what();
        }
      }) {}

BackgroundLoad::~BackgroundLoad() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

LoadResult BackgroundLoad::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (!error_.empty()) throw std::runtime_error("concurrent writer: " + error_);
  return result_;
}

}  // namespace zstore::bench
