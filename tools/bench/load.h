// The load generator shared by every mode: N writer threads send messages
// of one shape through a Transport; a receiver thread reports, per writer,
// the highest message seen through (a KVPUB, a relayed message, an ACK).
//
// Message n of writer w carries, in its body (the CHP value or the Dafka
// content, `value_bytes` >= kMinValueBytes long): the send time in
// steady_clock ns, the tag (run << 16 | w) and n (little-endian 8, 4 and 8
// bytes), then filler. The run number, random per run_load(), lets a
// receiver ignore what an earlier run left in the server's queues.
// CHP keys are 16 bytes, "s<d>/<13 digits>" with d the last digit of the
// key index, so the subtree "s0/" holds a tenth of the keys.
//
// Flow control: a writer never has more than `window` messages sent and not
// yet seen by the receiver, so nothing is dropped by a high-water mark and
// a saturating load does not just fill queues. With `rate` > 0 the writers
// are paced (open loop, the window only bounds memory).
//
// A writer first sends message 0 until the receiver saw it (the ZeroMQ
// subscription is then in place), then the run begins.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "protocol/frames.h"
#include "tools/bench/latency.h"

namespace zstore::bench {

inline constexpr std::size_t kMinValueBytes = 20;
inline constexpr const char* kBenchTopic = "bench";

enum class Shape { kChp, kDafka };

struct LoadSpec {
  Shape shape = Shape::kChp;
  int writers = 2;
  std::size_t value_bytes = 100;
  double rate = 0;              // total messages/s; 0: as fast as the window allows
  std::uint64_t window = 1000;  // per writer
  std::uint64_t key_space = 0;  // CHP keys cycle over this many; 0: every key new
  // Message n of a writer names key index n*writers+writer (mod key_space)
  // or, random, a uniformly scattered index (a fixed mix of it: the same
  // sequence every run, no two writers in step).
  bool random_keys = false;
  char key_letter = 's';  // first byte of every CHP key
  // CHP KVSETs carry a UUID (the tag and n), as a clone client's do: an HA
  // passive matches the active's KVPUBs to the updates it holds by UUID.
  bool chp_uuids = false;
  double warmup_s = 1.0;    // time before the measurement window
  double duration_s = 5.0;  // measurement window
  std::uint64_t total = 0;  // > 0: send exactly this many, then stop
  std::uint16_t run = 0;    // set by run_load()
};

// The CHP key of message n of a writer (see LoadSpec::random_keys).
std::string make_key(const LoadSpec& spec, int writer, std::uint64_t n);

struct LoadResult {
  std::uint64_t sent = 0;              // messages sent, all phases
  std::uint64_t completed = 0;         // seen by the receiver, all phases
  std::uint64_t window_completed = 0;  // seen inside the measurement window
  double window_seconds = 0;
  double rate() const { return window_seconds > 0 ? static_cast<double>(window_completed) / window_seconds : 0; }
  Latencies latencies;  // every receipt (filter with Latencies::window)
  std::int64_t window_start_ns = 0;
  std::int64_t window_end_ns = 0;
};

// Builds message n of writer w.
protocol::Frames make_message(const LoadSpec& spec, int writer, std::uint64_t n, const std::string& partition);
// The fields a body carries; false when it is too short.
// `tag` is run << 16 | writer.
bool read_body(std::string_view body, std::int64_t& sent_ns, std::uint32_t& tag, std::uint64_t& n);

void send_frames(zmq::socket_t& socket, const protocol::Frames& frames);

// Shared between writers and the receiver.
class Board {
 public:
  Board(int writers, std::uint64_t window, std::uint16_t run = 0);
  // complete() for a body's tag; ignores (false) a tag of another run.
  bool complete_tagged(std::uint32_t tag, std::uint64_t n, std::int64_t now_ns, std::int64_t sent_ns);
  // Receiver: writer w's messages up to n (inclusive) were seen at now_ns;
  // `sent_ns` gives the send time of message n if known (< 0: use the ring).
  void complete(int writer, std::uint64_t n, std::int64_t now_ns, std::int64_t sent_ns = -1);
  std::uint64_t done(int writer) const { return slots_[writer].done.load(std::memory_order_acquire); }
  void record_send(int writer, std::uint64_t n, std::int64_t sent_ns);
  void set_window(std::int64_t start_ns, std::int64_t end_ns);
  std::uint64_t window_completed() const { return window_completed_.load(); }
  int writers() const { return static_cast<int>(slots_.size()); }
  Latencies take_latencies() { return std::move(latencies_); }
  std::atomic<bool> stop{false};

 private:
  struct Slot {
    std::atomic<std::uint64_t> done{0};  // highest n seen + 1
    std::unique_ptr<std::atomic<std::int64_t>[]> send_ns;
  };
  std::vector<Slot> slots_;
  std::uint64_t window_;
  std::uint16_t run_;
  std::atomic<std::int64_t> window_start_{0};
  std::atomic<std::int64_t> window_end_{0};
  std::atomic<std::uint64_t> window_completed_{0};
  Latencies latencies_;  // receiver thread only
};

// One writer's way out (created and used on its thread).
class Outlet {
 public:
  virtual ~Outlet() = default;
  virtual void send(const protocol::Frames& frames) = 0;
  virtual void tick() {}                             // called between sends (beacons, ...)
  virtual const std::string& partition() const = 0;  // the writer's Dafka partition (unused by CHP messages)
};

class Transport {
 public:
  virtual ~Transport() = default;
  // On the writer's thread. May block until the outlet is usable; throws
  // std::runtime_error when it cannot become so.
  virtual std::unique_ptr<Outlet> open(int writer) = 0;
  // The receiver thread's body: calls board.complete() until board.stop.
  // `partitions` are the writers' partitions, known once every writer opened.
  virtual void receive(Board& board, const std::vector<std::string>& partitions) = 0;
};

// Runs the load. `external_stop` (may be null) ends an unbounded run early
// (the measurement window then ends there too). Throws std::runtime_error
// when a writer cannot start or the run stalls for 30 s.
LoadResult run_load(const LoadSpec& spec, Transport& transport, const std::atomic<bool>* external_stop = nullptr);

// The concurrent writer beside a measurement (snapshot, resync): one writer
// updating keys w*/ 0..999 in turn at `rate`, for as long as it runs.
LoadSpec background_writer_spec(std::size_t value_bytes, double rate);

// run_load on its own thread from construction until stop().
class BackgroundLoad {
 public:
  BackgroundLoad(const LoadSpec& spec, Transport& transport);
  ~BackgroundLoad();  // stops it if stop() was not called; ignores its error
  BackgroundLoad(const BackgroundLoad&) = delete;
  BackgroundLoad& operator=(const BackgroundLoad&) = delete;
  // Ends the load and returns what it measured; throws std::runtime_error
  // ("concurrent writer: ...") when it failed.
  LoadResult stop();

 private:
  std::atomic<bool> stop_{false};
  LoadResult result_;
  std::string error_;
  std::thread thread_;
};

}  // namespace zstore::bench
