#include "server/reactor_thread.h"

#include <utility>

namespace zstore::server {

namespace {
// Each pipe gets its own inproc name within the process.
std::string next_stop_endpoint() {
  static std::atomic<std::uint64_t> next{0};
  return "inproc://zstore-reactor-stop-" + std::to_string(next.fetch_add(1));
}
}  // namespace

ReactorThread::ReactorThread(zmq::context_t& ctx, std::atomic<std::int64_t>& heartbeat_ms,
                             std::atomic<std::uint64_t>* turns)
    : ctx_(ctx), heartbeat_ms_(heartbeat_ms), turns_(turns) {}

ReactorThread::~ReactorThread() { stop(); }

void ReactorThread::start(std::function<void()> body) {
  std::string endpoint = next_stop_endpoint();
  stop_rx_ = zmq::socket_t(ctx_, zmq::socket_type::pair);
  stop_rx_.bind(endpoint);
  stop_tx_ = zmq::socket_t(ctx_, zmq::socket_type::pair);
  stop_tx_.connect(endpoint);
  heartbeat_ms_ = loop_clock_ms();  // started: healthy until it misses a turn
  thread_ = std::thread(std::move(body));
}

bool ReactorThread::stop() {
  if (!thread_.joinable()) return false;
  stop_tx_.send(zmq::str_buffer("stop"), zmq::send_flags::none);
  thread_.join();
  stop_rx_.close();
  stop_tx_.close();
  return true;
}

}  // namespace zstore::server
