#include "tools/bench/storm_clients.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <string_view>

#include "protocol/chp_codec.h"
#include "storage/chp/chp_epochs.h"
#include "tools/bench/latency.h"
#include "tools/bench/load.h"

namespace zstore::bench {

namespace chp = protocol::chp;

namespace {

using Frames6 = std::array<zmq::message_t, 6>;

// One client, owned by its thread.
struct Client {
  StormStatus* status = nullptr;
  std::unique_ptr<zmq::socket_t> sub;
  std::unique_ptr<zmq::socket_t> dealer;
  bool syncing = false;
  bool replied = false;
  std::optional<std::uint64_t> asked_after;  // the sequence the round's request named
  std::uint64_t pending_max = 0;             // highest KVPUB while the snapshot streams
  std::int64_t sent_ns = 0;
  int round = 0;
  std::atomic<int>* answered_round = nullptr;  // the fleet's: the last round any client got a reply in
};

// Reads one multipart message (frames past the sixth overwrite the sixth);
// the number of frames, 0 when none is waiting.
std::size_t read_message(zmq::socket_t& socket, Frames6& frames) {
  if (!socket.recv(frames[0], zmq::recv_flags::dontwait)) return 0;
  std::size_t n = 1;
  while (frames[n - 1].more()) {
    std::size_t slot = std::min<std::size_t>(n, frames.size() - 1);
    (void)socket.recv(frames[slot]);
    n = slot + 1;
  }
  return n;
}

std::string_view view(const zmq::message_t& frame) { return {frame.data<char>(), frame.size()}; }

std::uint64_t sequence_of(const zmq::message_t& frame) {
  if (frame.size() != chp::kSequenceSize) return 0;
  std::uint64_t value = 0;
  for (unsigned char byte : view(frame)) value = value << 8 | byte;
  return value;
}

// A KVPUB (HUGZ ignored): applied when it follows the last sequence.
void on_update(Client& c, const Frames6& frames, std::size_t n) {
  if (n != chp::kKvFrames || view(frames[0]) == chp::kHugz) return;
  std::uint64_t seq = sequence_of(frames[1]);
  if (c.syncing) {
    c.pending_max = std::max(c.pending_max, seq);
    return;
  }
  std::uint64_t last = c.status->last.load(std::memory_order_relaxed);
  if (seq <= last) return;
  if (seq != last + 1) c.status->gaps.fetch_add(1, std::memory_order_relaxed);
  c.status->last.store(seq, std::memory_order_relaxed);
}

// A KVSYNC (counted) or the KTHXBAI that ends the round.
void on_reply(Client& c, const Frames6& frames, std::size_t n) {
  if (!c.syncing) return;  // a late answer to an earlier round
  if (!c.replied) {
    c.replied = true;
    c.status->first_reply_ns.store(now_ns(), std::memory_order_relaxed);
    c.answered_round->store(c.round, std::memory_order_relaxed);
  }
  if (view(frames[0]) != chp::kKthxbai) {
    c.status->keys.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (n < 4) return;
  bool resumed = false;
  if (auto properties = chp::parse_properties(view(frames[3]))) {
    for (const auto& [name, value] : *properties) resumed |= name == chp::kResumedProperty && value == "1";
  }
  bool ahead = !resumed && c.asked_after && sequence_unknown_to(view(frames[3]), *c.asked_after);
  c.syncing = false;
  c.status->last.store(std::max(sequence_of(frames[1]), c.pending_max), std::memory_order_relaxed);
  c.status->resumed.store(resumed, std::memory_order_relaxed);
  c.status->ahead.store(ahead, std::memory_order_relaxed);
  c.status->done_ns.store(now_ns(), std::memory_order_relaxed);
  c.status->done_round.store(c.round, std::memory_order_release);
}

// (Re)sends the round's request on a new DEALER: a reply to an earlier one
// can then never be counted twice.
void send_request(Client& c, zmq::context_t& context, const std::string& endpoint, bool resume) {
  c.dealer = std::make_unique<zmq::socket_t>(context, zmq::socket_type::dealer);
  c.dealer->set(zmq::sockopt::linger, 0);
  c.dealer->connect(endpoint);
  c.asked_after.reset();
  if (resume) c.asked_after = c.status->last.load(std::memory_order_relaxed);
  send_frames(*c.dealer, chp::encode_icanhaz({"", c.asked_after}));
  c.sent_ns = now_ns();
}

void start_round(Client& c, zmq::context_t& context, int round, const std::string& endpoint, bool resume) {
  c.round = round;
  c.syncing = true;
  c.replied = false;
  c.pending_max = 0;
  c.status->keys.store(0, std::memory_order_relaxed);
  c.status->resumed.store(false, std::memory_order_relaxed);
  c.status->ahead.store(false, std::memory_order_relaxed);
  send_request(c, context, endpoint, resume);
}

// Reads what is waiting, at most `budget` messages per socket, so one busy
// client does not starve the others of its thread.
void drain(Client& c, Frames6& frames, int budget) {
  for (int i = 0; i < budget; ++i) {
    std::size_t n = read_message(*c.sub, frames);
    if (n == 0) break;
    on_update(c, frames, n);
  }
  for (int i = 0; c.dealer && i < budget; ++i) {
    std::size_t n = read_message(*c.dealer, frames);
    if (n == 0) break;
    on_reply(c, frames, n);
  }
}

}  // namespace

bool sequence_unknown_to(std::string_view kthxbai_properties, std::uint64_t sequence) {
  storage::ChpEpochs epochs = storage::epochs_in_properties(kthxbai_properties);
  return !epochs.empty() && !storage::contains_sequence(epochs, sequence);
}

StormFleet::StormFleet(int clients, int threads, std::vector<std::string> publishers)
    : context_(1), publishers_(std::move(publishers)), status_(new StormStatus[clients]), clients_(clients) {
  context_.set(zmq::ctxopt::max_sockets, 4 * clients + 64);  // a SUB and a DEALER (plus closing ones) per client
  threads = std::max(1, std::min(threads, clients));
  for (int t = 0; t < threads; ++t) {
    int first = clients * t / threads;
    int count = clients * (t + 1) / threads - first;
    threads_.emplace_back([this, first, count] { run(first, count); });
  }
}

StormFleet::~StormFleet() {
  stop_ = true;
  for (auto& thread : threads_) thread.join();
}

void StormFleet::request(const std::string& endpoint, bool resume) {
  std::lock_guard lock(mutex_);
  request_ = {request_.id + 1, endpoint, resume};
  round_.store(request_.id, std::memory_order_release);
}

StormFleet::Request StormFleet::current() const {
  std::lock_guard lock(mutex_);
  return request_;
}

void StormFleet::run(int first, int count) {
  std::vector<Client> clients(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    Client& c = clients[static_cast<std::size_t>(i)];
    c.status = &status_[first + i];
    c.answered_round = &answered_round_;
    c.sub = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::sub);
    c.sub->set(zmq::sockopt::rcvhwm, 1000000);  // a client busy with its snapshot loses no KVPUB
    c.sub->set(zmq::sockopt::linger, 0);
    c.sub->set(zmq::sockopt::subscribe, "");
    for (const auto& endpoint : publishers_) c.sub->connect(endpoint);
  }
  Frames6 frames;
  std::vector<zmq::pollitem_t> items;
  int seen = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    if (round_.load(std::memory_order_acquire) != seen) {
      Request request = current();
      seen = request.id;
      for (Client& c : clients) start_round(c, context_, request.id, request.endpoint, request.resume);
    }
    items.clear();
    for (Client& c : clients) {
      items.push_back({c.sub->handle(), 0, ZMQ_POLLIN, 0});
      if (c.dealer) items.push_back({c.dealer->handle(), 0, ZMQ_POLLIN, 0});
    }
    zmq::poll(items.data(), items.size(), std::chrono::milliseconds(20));
    // Until the server answers anyone, ask again often (it is restarting or
    // not yet active); once it serves, rarely: a slow first reply under
    // load must not turn into a new snapshot session per client.
    bool serving = answered_round_.load(std::memory_order_relaxed) == seen;
    std::int64_t retry_before = now_ns() - std::int64_t{serving ? kServingRetryMs : kRetryMs} * 1000000;
    Request request = seen > 0 ? current() : Request{};
    for (Client& c : clients) {
      drain(c, frames, 256);
      if (c.syncing && !c.replied && c.sent_ns < retry_before)
        send_request(c, context_, request.endpoint, request.resume);
    }
  }
}

bool StormFleet::all_done() const { return clients_done() == clients_; }

int StormFleet::clients_done() const {
  int round = round_.load(std::memory_order_acquire);
  int done = 0;
  for (int i = 0; i < clients_; ++i) done += status_[i].done_round.load(std::memory_order_acquire) == round ? 1 : 0;
  return done;
}

StormRound StormFleet::round() const {
  StormRound r;
  for (int i = 0; i < clients_; ++i) {
    const StormStatus& s = status_[i];
    r.keys += s.keys.load();
    r.resumed += s.resumed.load() ? 1 : 0;
    r.ahead += s.ahead.load() ? 1 : 0;
    std::int64_t first = s.first_reply_ns.load();
    if (r.first_reply_ns == 0 || first < r.first_reply_ns) r.first_reply_ns = first;
    r.last_done_ns = std::max(r.last_done_ns, s.done_ns.load());
  }
  return r;
}

std::uint64_t StormFleet::min_sequence() const {
  std::uint64_t low = UINT64_MAX;
  for (int i = 0; i < clients_; ++i) low = std::min(low, status_[i].last.load());
  return low;
}

std::uint64_t StormFleet::gaps() const {
  std::uint64_t total = 0;
  for (int i = 0; i < clients_; ++i) total += status_[i].gaps.load();
  return total;
}

}  // namespace zstore::bench
