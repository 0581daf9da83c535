#include "tools/bench/read_limits.h"

#include <deque>
#include <iterator>
#include <set>
#include <stdexcept>

#include <zmq_addon.hpp>

#include "protocol/beacon.h"
#include "protocol/chp_codec.h"
#include "protocol/dafka_codec.h"

namespace zstore::bench {

namespace chp = protocol::chp;
namespace dafka = protocol::dafka;
namespace beacon = protocol::beacon;

namespace {

using std::chrono::milliseconds;

bool wait_for(zmq::socket_t& socket, short events, milliseconds timeout) {
  zmq::pollitem_t item{socket.handle(), 0, events, 0};
  return zmq::poll(&item, 1, timeout) > 0;
}

// Sends identity (unless empty) then frames. Only the first frame of a
// message can be refused (a full pipe): it is retried until it goes or stop
// is set (then false).
bool send_waiting(zmq::socket_t& socket, std::string_view identity, protocol::FrameViews frames,
                  const std::atomic<bool>& stop) {
  std::size_t first = identity.empty() ? 1 : 0;
  std::size_t n = frames.size() + 1;
  for (std::size_t i = first; i < n; ++i) {
    std::string_view frame = i == 0 ? identity : frames[i - 1];
    auto flags = (i + 1 < n ? zmq::send_flags::sndmore : zmq::send_flags::none) | zmq::send_flags::dontwait;
    while (!socket.send(zmq::buffer(frame.data(), frame.size()), flags)) {
      if (stop) return false;
      (void)wait_for(socket, ZMQ_POLLOUT, milliseconds(10));
    }
  }
  return true;
}

std::vector<std::string_view> views_of(const std::vector<zmq::message_t>& parts, std::size_t from) {
  std::vector<std::string_view> views;
  for (std::size_t i = from; i < parts.size(); ++i) views.push_back(parts[i].to_string_view());
  return views;
}

// The KVSYNCs of a snapshot of `keys` keys, then KTHXBAI. False when the
// client vanished (ZMQ_ROUTER_MANDATORY) or stop was set.
bool stream_snapshot(zmq::socket_t& router, std::string_view identity, std::uint64_t keys, std::size_t value_bytes,
                     const std::atomic<bool>& stop) {
  std::string key = "k0/0000000000000";  // 16 bytes, like the bench's keys
  const std::string uuid(16, 'u');
  const std::string value(value_bytes, 'v');
  try {
    for (std::uint64_t i = 0; i < keys; ++i) {
      if (i % 1024 == 0 && stop) return false;
      std::uint64_t n = i;
      for (std::size_t d = key.size(); d-- > 3; n /= 10) key[d] = static_cast<char>('0' + n % 10);
      chp::KvMsgFrames frames(key, i + 1, uuid, "", value);
      if (!send_waiting(router, identity, frames.frames(), stop)) return false;
    }
    protocol::Frames done = chp::encode_kthxbai({keys, "", {}});
    std::vector<std::string_view> views(done.begin(), done.end());
    return send_waiting(router, identity, views, stop);
  } catch (const zmq::error_t& e) {
    if (e.num() == EHOSTUNREACH) return false;
    throw;
  }
}

void serve_snapshots(zmq::context_t& context, const std::atomic<bool>& stop, const SourceThread::Ready& ready,
                     std::uint64_t keys, std::size_t value_bytes) {
  zmq::socket_t router(context, zmq::socket_type::router);
  router.set(zmq::sockopt::router_mandatory, 1);
  router.set(zmq::sockopt::sndhwm, 10000);  // as zstored's snapshot socket
  router.set(zmq::sockopt::linger, 0);
  router.bind("tcp://127.0.0.1:*");
  ready({router.get(zmq::sockopt::last_endpoint)});
  std::vector<zmq::message_t> request;
  while (!stop) {
    if (!wait_for(router, ZMQ_POLLIN, milliseconds(50))) continue;
    request.clear();
    if (!zmq::recv_multipart(router, std::back_inserter(request), zmq::recv_flags::dontwait)) continue;
    if (request.size() < 2 || !chp::decode_icanhaz(views_of(request, 1))) continue;
    (void)stream_snapshot(router, request[0].to_string_view(), keys, value_bytes, stop);
  }
}

// A FETCH being answered: records [next, end) of one partition.
struct Answer {
  dafka::Fetch fetch;
  std::uint64_t next = 0;
  std::uint64_t end = 0;
  std::string header;  // its DIRECT-RECORD header, encoded once (as zstored's FetchPump does)
};

class FetchServer {
 public:
  FetchServer(zmq::context_t& context, std::size_t value_bytes)
      : tower_(context, zmq::socket_type::sub),
        publisher_(context, zmq::socket_type::xpub),
        fetches_(context, zmq::socket_type::sub),
        content_(value_bytes, 'r') {
    for (zmq::socket_t* s : {&tower_, &publisher_, &fetches_}) s->set(zmq::sockopt::linger, 0);
    tower_.set(zmq::sockopt::subscribe, "");
    // As zstored's store: a full pipe pauses the answers instead of losing them.
    publisher_.set(zmq::sockopt::xpub_nodrop, 1);
    publisher_.set(zmq::sockopt::sndhwm, 10000);
    fetches_.set(zmq::sockopt::rcvhwm, 100000);
    fetches_.set(zmq::sockopt::subscribe, dafka::subscription(dafka::MsgId::kFetch, ""));
    tower_.bind("tcp://127.0.0.1:*");
    publisher_.bind("tcp://127.0.0.1:*");
  }

  std::vector<std::string> endpoints() const {
    return {tower_.get(zmq::sockopt::last_endpoint), publisher_.get(zmq::sockopt::last_endpoint)};
  }

  void serve(const std::atomic<bool>& stop) {
    while (!stop) {
      zmq::pollitem_t items[] = {{tower_.handle(), 0, ZMQ_POLLIN, 0},
                                 {fetches_.handle(), 0, ZMQ_POLLIN, 0},
                                 {publisher_.handle(), 0, ZMQ_POLLIN, 0}};
      // As zstored's store: a full pipe waits 1 ms for input or the pipe
      // to drain (an XPUB always reports POLLOUT: waiting on it would spin
      // and take the core from the I/O thread that drains the pipe).
      (void)zmq::poll(items, 3, answers_.empty() ? milliseconds(50) : blocked_ ? milliseconds(1) : milliseconds(0));
      read_beacons();
      read_fetches();
      zmq::message_t subscription;
      while (publisher_.recv(subscription, zmq::recv_flags::dontwait)) {
      }
      answer(2048);
    }
  }

 private:
  // Connects to the publisher of every node that beacons, once.
  void read_beacons() {
    std::vector<zmq::message_t> parts;
    while (zmq::recv_multipart(tower_, std::back_inserter(parts), zmq::recv_flags::dontwait)) {
      auto node = beacon::decode_node_beacon(views_of(parts, 0));
      parts.clear();
      if (!node || !nodes_.insert(node->uuid).second) continue;
      fetches_.connect(beacon::tower_endpoint(node->host.empty() ? "127.0.0.1" : node->host, node->port));
    }
  }

  void read_fetches() {
    std::vector<zmq::message_t> parts;
    while (zmq::recv_multipart(fetches_, std::back_inserter(parts), zmq::recv_flags::dontwait)) {
      auto message = dafka::decode(views_of(parts, 0));
      parts.clear();
      const auto* fetch = message ? std::get_if<dafka::Fetch>(&*message) : nullptr;
      if (fetch != nullptr) answers_.push_back({*fetch, fetch->sequence, fetch->sequence + fetch->count, {}});
    }
  }

  // Up to budget DIRECT-RECORDs, oldest FETCH first; stops at a full pipe
  // (blocked_). ZeroMQ queues whole messages: once the first frame is
  // taken, the second is too.
  void answer(std::size_t budget) {
    blocked_ = false;
    for (std::size_t sent = 0; sent < budget && !answers_.empty();) {
      Answer& a = answers_.front();
      if (a.next == a.end) {
        answers_.pop_front();
        continue;
      }
      if (a.header.empty()) {
        dafka::encode_direct_record_header(a.fetch.address, a.fetch.topic, a.fetch.subject, a.next, &a.header);
      } else {
        dafka::set_direct_record_sequence(a.next, &a.header);
      }
      if (!publisher_.send(zmq::buffer(a.header), zmq::send_flags::sndmore | zmq::send_flags::dontwait)) {
        blocked_ = true;
        return;
      }
      (void)publisher_.send(zmq::buffer(content_), zmq::send_flags::none);
      ++a.next;
      ++sent;
    }
  }

  zmq::socket_t tower_;
  zmq::socket_t publisher_;
  zmq::socket_t fetches_;
  std::string content_;
  std::set<std::string> nodes_;
  std::deque<Answer> answers_;
  bool blocked_ = false;  // the last answer() stopped at a full pipe
};

}  // namespace

SnapshotSource::SnapshotSource(int cpu, std::uint64_t keys, std::size_t value_bytes)
    : thread_("snapshot source", cpu,
              [keys, value_bytes](zmq::context_t& context, const std::atomic<bool>& stop,
                                  const SourceThread::Ready& ready) {
                serve_snapshots(context, stop, ready, keys, value_bytes);
              }) {}

FetchSource::FetchSource(int cpu, std::size_t value_bytes)
    : thread_("fetch source", cpu,
              [value_bytes](zmq::context_t& context, const std::atomic<bool>& stop, const SourceThread::Ready& ready) {
                FetchServer server(context, value_bytes);
                ready(server.endpoints());
                server.serve(stop);
              }) {}

}  // namespace zstore::bench
