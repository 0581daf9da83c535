#include "tools/bench/probes.h"

#include <chrono>
#include <stdexcept>
#include <unordered_map>

#include "protocol/chp_codec.h"
#include "protocol/dafka_codec.h"
#include "tools/bench/latency.h"
#include "tools/bench/load.h"
#include "tools/bench/transports.h"

namespace zstore::bench {

namespace chp = protocol::chp;
namespace dafka = protocol::dafka;
using Clock = std::chrono::steady_clock;

SnapshotTiming time_snapshot(zmq::context_t& context, const std::string& endpoint, const std::string& subtree) {
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::rcvhwm, 0);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.connect(endpoint);
  SnapshotTiming timing;
  timing.start_ns = now_ns();
  send_frames(dealer, chp::encode_icanhaz({subtree, std::nullopt}));
  auto deadline = Clock::now() + std::chrono::seconds(300);
  zmq::message_t first;
  while (true) {
    // Poll only when nothing is waiting: a zmq_poll per key (a poll()
    // system call each) made this receiver, not zstored, the limit.
    if (!dealer.recv(first, zmq::recv_flags::dontwait)) {
      zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
      if (zmq::poll(&item, 1, std::chrono::milliseconds(100)) == 0 && Clock::now() > deadline) {
        throw std::runtime_error("no KTHXBAI within 300 s");
      }
      continue;
    }
    bool done = first.to_string_view() == chp::kKthxbai;
    while (first.more()) (void)dealer.recv(first);  // the other frames
    if (done) break;
    ++timing.keys;
  }
  timing.end_ns = now_ns();
  timing.seconds = static_cast<double>(timing.end_ns - timing.start_ns) / 1e9;
  return timing;
}

namespace {

constexpr std::uint64_t kMaxFetch = 1000000;

struct Partition {
  std::string name;
  std::uint64_t next = 0;      // first record not received yet
  std::uint64_t count = 0;     // records to receive
  std::uint64_t asked_to = 0;  // end of the last FETCH
};

void fetch(BenchNode& node, Partition& p) {
  auto count = static_cast<std::uint32_t>(std::min(kMaxFetch, p.count - p.next));
  send_frames(node.publisher(), dafka::encode(dafka::Fetch{p.name, node.address(), kBenchTopic, p.next, count}));
  p.asked_to = p.next + count;
}

// Takes every DIRECT-RECORD waiting on sub: counts the ones next in their
// partition and FETCHes the rest of a partition whose asked range is done.
void take_records(zmq::socket_t& sub, BenchNode& node, std::vector<Partition>& parts,
                  const std::unordered_map<std::string, std::size_t>& index, ReplayTiming& timing,
                  Clock::time_point& progress) {
  std::vector<std::string_view> views;
  zmq::message_t header;
  zmq::message_t content;
  while (sub.recv(header, zmq::recv_flags::dontwait)) {
    bool two = header.more();
    if (two) (void)sub.recv(content);
    if (!two) continue;
    views = {header.to_string_view(), content.to_string_view()};
    auto decoded = dafka::decode(views);
    if (!decoded) continue;
    const auto* record = std::get_if<dafka::DirectRecord>(&*decoded);
    if (record == nullptr) continue;
    auto found = index.find(record->partition);
    if (found == index.end()) continue;
    Partition& p = parts[found->second];
    if (record->sequence != p.next) continue;  // duplicate or out of order: re-FETCHed later
    ++p.next;
    ++timing.records;
    progress = Clock::now();
    if (p.next == p.asked_to && p.next < p.count) fetch(node, p);
  }
}

}  // namespace

ReplayTiming time_replay(zmq::context_t& context, const std::string& tower, const std::string& store,
                         const std::vector<std::string>& partitions, const std::vector<std::uint64_t>& counts) {
  BenchNode node(context, tower);
  zmq::socket_t sub(context, zmq::socket_type::sub);
  sub.set(zmq::sockopt::rcvhwm, 0);
  sub.set(zmq::sockopt::linger, 0);
  sub.set(zmq::sockopt::subscribe, dafka::subscription(dafka::MsgId::kDirectRecord, node.address()));
  sub.connect(store);
  if (!node.wait_subscriber(std::chrono::seconds(30))) throw std::runtime_error("the store never connected");
  std::vector<Partition> parts;
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    parts.push_back({partitions[i], 0, counts[i], 0});
    index[partitions[i]] = i;
  }
  ReplayTiming timing;
  std::uint64_t wanted = 0;
  for (std::uint64_t c : counts) wanted += c;
  std::int64_t start = now_ns();
  timing.start_ns = start;
  for (Partition& p : parts) fetch(node, p);
  auto progress = Clock::now();
  auto refetched = progress;
  while (timing.records < wanted) {
    node.tick();
    zmq::pollitem_t item{sub.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, std::chrono::milliseconds(100)) == 0) {
      if (Clock::now() - progress > std::chrono::seconds(30)) throw std::runtime_error("replay stalled for 30 s");
      if (Clock::now() - progress > std::chrono::seconds(1) && Clock::now() - refetched > std::chrono::seconds(1)) {
        for (Partition& p : parts) {
          if (p.next < p.count) fetch(node, p);
        }
        refetched = Clock::now();
        ++timing.refetches;
      }
      continue;
    }
    take_records(sub, node, parts, index, timing, progress);
  }
  timing.end_ns = now_ns();
  timing.seconds = static_cast<double>(timing.end_ns - start) / 1e9;
  return timing;
}

}  // namespace zstore::bench
