#include "client/clone_client.h"

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

#include <zmq.hpp>

#include "client/client_state.h"
#include "client/clone_agent.h"
#include "client/server_endpoints.h"
#include "client/uuid.h"
#include "protocol/chp_codec.h"
#include "protocol/chp_writes.h"
#include "transport/zmq_frames.h"

namespace zstore::client {

namespace chp = protocol::chp;

namespace {

chp::Precondition wire_precondition(const WriteOptions::Precondition& p) {
  switch (p.kind) {
    case WriteOptions::Precondition::Kind::kSequence:
      return {chp::Precondition::Kind::kSequence, p.sequence};
    case WriteOptions::Precondition::Kind::kAbsent:
      return {chp::Precondition::Kind::kAbsent, 0};
    case WriteOptions::Precondition::Kind::kNone:
      break;
  }
  return {};
}

std::vector<ServerEndpoints> parse_servers(const Options& options) {
  if (options.servers.empty() || options.servers.size() > 2) {
    throw std::invalid_argument("CloneClient needs one or two servers, got " + std::to_string(options.servers.size()));
  }
  std::vector<ServerEndpoints> out;
  for (const auto& address : options.servers) out.push_back(parse_server(address));
  return out;
}

void check_options(const Options& options) {
  using std::chrono::milliseconds;
  if (options.failover_timeout <= milliseconds(0)) throw std::invalid_argument("failover_timeout must be positive");
  if (options.snapshot_retry_initial <= milliseconds(0) ||
      options.snapshot_retry_max < options.snapshot_retry_initial) {
    throw std::invalid_argument("snapshot retry delays must be positive, initial <= max");
  }
}

void check_write(std::string_view key, std::string_view value, std::uint64_t ttl_seconds) {
  const chp::Limits limits;
  if (key.empty()) throw std::invalid_argument("CHP keys cannot be empty");
  if (chp::is_reserved_key(key)) throw std::invalid_argument("'" + std::string(key) + "' is a reserved CHP key");
  if (key.size() > limits.max_key_bytes) throw std::invalid_argument("key too long");
  if (value.size() > limits.max_value_bytes) throw std::invalid_argument("value too large");
  if (ttl_seconds > limits.max_ttl_seconds) throw std::invalid_argument("ttl too large");
}

std::string pipe_endpoint() {
  static std::atomic<std::uint64_t> counter{0};
  return "inproc://zstore-clone-client-" + std::to_string(counter.fetch_add(1));
}

}  // namespace

struct CloneClient::Impl {
  std::unique_ptr<zmq::context_t> own_context;
  ClientState state;
  std::mutex pipe_mutex;  // the API end of the pipe is shared by every caller
  zmq::socket_t pipe;
  std::unique_ptr<CloneAgent> agent;
  std::thread thread;
  std::size_t max_unsent = 0;
  std::chrono::milliseconds write_wait{0};

  void send(const protocol::Frames& frames) {
    std::lock_guard lock(pipe_mutex);
    transport::send(pipe, frames);  // blocks while the agent is behind
  }

  PendingWrite submit(std::shared_ptr<PendingWrite::State> write) {
    if (state.confirmed_writes().size() >= max_unsent) {
      throw WriteQueueFull("CHP client: " + std::to_string(max_unsent) +
                           " confirmed writes still wait for their answer");
    }
    state.confirmed_writes().add(write);
    protocol::Frames frames = write->request;
    frames.insert(frames.begin(), std::string(kPipeWrite));
    send(frames);
    return PendingWrite(std::move(write));
  }
};

CloneClient::CloneClient(Options options) : impl_(std::make_unique<Impl>()) {
  check_options(options);
  std::vector<ServerEndpoints> servers = parse_servers(options);
  if (options.context == nullptr) {
    impl_->own_context = std::make_unique<zmq::context_t>();
    options.context = impl_->own_context.get();
  }
  zmq::context_t& ctx = *options.context;
  impl_->max_unsent = std::max<std::size_t>(options.max_unsent_writes, 1);
  impl_->write_wait = options.write_wait;
  const std::string endpoint = pipe_endpoint();
  zmq::socket_t agent_pipe(ctx, zmq::socket_type::pair);
  agent_pipe.set(zmq::sockopt::linger, 0);
  agent_pipe.bind(endpoint);
  impl_->pipe = zmq::socket_t(ctx, zmq::socket_type::pair);
  impl_->pipe.set(zmq::sockopt::linger, 0);
  impl_->pipe.connect(endpoint);
  impl_->agent = std::make_unique<CloneAgent>(ctx, options, std::move(servers), impl_->state, std::move(agent_pipe));
  impl_->thread = std::thread([agent = impl_->agent.get()] { agent->run(); });
}

CloneClient::~CloneClient() {
  try {
    impl_->send({std::string(kPipeStop)});
  } catch (const zmq::error_t&) {
    // The agent also stops when the context terminates.
  }
  if (impl_->thread.joinable()) impl_->thread.join();
  impl_->pipe.close();
  impl_->agent.reset();
}

std::string CloneClient::set(std::string_view key, std::string_view value, std::uint64_t ttl_seconds) {
  check_write(key, value, ttl_seconds);
  chp::KvMsg msg{std::string(key), 0, random_uuid(), "", std::string(value)};
  if (ttl_seconds > 0) msg.properties = chp::format_properties({{"ttl", std::to_string(ttl_seconds)}});
  protocol::Frames frames = chp::encode_kvmsg(msg);
  frames.insert(frames.begin(), std::string(kPipeSet));
  if (impl_->state.unsent_writes() >= impl_->max_unsent &&
      !impl_->state.wait_unsent_below(impl_->max_unsent, impl_->write_wait)) {
    throw WriteQueueFull("CHP client: " + std::to_string(impl_->max_unsent) + " writes still wait after " +
                         std::to_string(impl_->write_wait.count()) + " ms for a server that takes them");
  }
  impl_->state.write_handed();
  impl_->send(frames);
  return msg.uuid;
}

std::string CloneClient::erase(std::string_view key) { return set(key, "", 0); }

PendingWrite CloneClient::write(std::string_view key, std::string_view value, const WriteOptions& options) {
  const std::uint64_t ttl = value.empty() ? 0 : options.ttl_seconds;
  check_write(key, value, ttl);
  auto write = std::make_shared<PendingWrite::State>();
  write->uuid = random_uuid();
  std::string properties = ttl > 0 ? chp::format_properties({{"ttl", std::to_string(ttl)}}) : "";
  write->request = chp::encode_write(key, write->uuid, properties, value, wire_precondition(options.precondition));
  return impl_->submit(std::move(write));
}

PendingWrite CloneClient::write_erase(std::string_view key, const WriteOptions& options) {
  return write(key, "", options);
}

PendingWrite CloneClient::retry(const PendingWrite& earlier) {
  auto write = std::make_shared<PendingWrite::State>();
  write->uuid = earlier.state()->uuid;
  write->request = earlier.state()->request;
  return impl_->submit(std::move(write));
}

std::optional<std::string> CloneClient::get(std::string_view key) const { return impl_->state.get(key); }
std::optional<std::pair<std::string, std::uint64_t>> CloneClient::get_with_sequence(std::string_view key) const {
  return impl_->state.get_with_sequence(key);
}
std::map<std::string, std::string> CloneClient::snapshot_map() const { return impl_->state.values(); }
std::uint64_t CloneClient::sequence() const { return impl_->state.sequence(); }
bool CloneClient::synced() const { return impl_->state.synced(); }
ClientStats CloneClient::stats() const { return impl_->state.stats(); }
std::optional<std::string> CloneClient::handshake_error() const { return impl_->state.handshake_error(); }

bool CloneClient::wait_synced(std::chrono::milliseconds timeout) const { return impl_->state.wait_synced(timeout); }

bool CloneClient::wait_published(std::string_view uuid, std::chrono::milliseconds timeout) const {
  return impl_->state.wait_published(uuid, timeout);
}

bool CloneClient::wait_for(const std::function<bool()>& predicate, std::chrono::milliseconds timeout) const {
  return impl_->state.wait_for(predicate, timeout);
}

}  // namespace zstore::client
