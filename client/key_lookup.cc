#include "client/key_lookup.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include <zmq.hpp>

#include "client/server_endpoints.h"
#include "protocol/chp_codec.h"
#include "security/watched_socket.h"
#include "transport/zmq_frames.h"

namespace zstore::client {
namespace {

namespace chp = protocol::chp;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How one request to one server ended.
enum class Reply : std::uint8_t { kFound, kAbsent, kSilent, kMalformed, kRefused };

struct Request {
  security::WatchedSocket dealer;
  std::string value;  // kFound
  std::string error;  // kRefused: why the handshake failed
};

Request ask(zmq::context_t& ctx, const ServerEndpoints& server, std::string_view key,
            const security::SocketSecurity& security) {
  zmq::socket_t dealer(ctx, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  security.as_client(dealer);
  Request r{security::WatchedSocket(ctx, std::move(dealer), security.curve()), {}, {}};
  r.dealer.socket().connect(server.snapshot);
  transport::send(r.dealer.socket(), chp::encode_icanhaz({std::string(key), std::nullopt}));
  return r;
}

milliseconds until(Clock::time_point t) {
  return std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(t - Clock::now()));
}

// Reads replies until KEY, KTHXBAI, silence for failover or the deadline.
// After a malformed reply the snapshot cannot prove KEY absent (the bad
// entry may have been KEY): its KTHXBAI then counts as kMalformed.
Reply await(Request& r, std::string_view key, milliseconds failover, Clock::time_point deadline) {
  auto silent_at = Clock::now() + failover;
  bool spoiled = false;
  while (true) {
    zmq::pollitem_t items[] = {{r.dealer.socket().handle(), 0, ZMQ_POLLIN, 0},
                               {r.dealer.monitor().events().handle(), 0, ZMQ_POLLIN, 0}};
    if (zmq::poll(items, 2, until(std::min(silent_at, deadline))) == 0) return Reply::kSilent;
    if (auto failure = r.dealer.monitor().poll()) {
      r.error = failure->message;
      return Reply::kRefused;
    }
    if ((items[0].revents & ZMQ_POLLIN) == 0) continue;
    transport::Message msg;
    if (!transport::try_recv(r.dealer.socket(), &msg)) continue;
    silent_at = Clock::now() + failover;
    const auto& views = msg.views;
    auto reply = chp::decode_snapshot_reply(views);
    if (!reply) {
      spoiled = true;
      continue;
    }
    if (std::holds_alternative<chp::Kthxbai>(*reply)) return spoiled ? Reply::kMalformed : Reply::kAbsent;
    auto& entry = std::get<chp::KvMsg>(*reply);
    if (entry.key == key && !entry.body.empty()) {
      r.value = std::move(entry.body);
      return Reply::kFound;
    }
  }
}

// Whether every server's last handshake failed; if so, fills out.
bool all_refused(const std::vector<std::string>& refusals, KeyLookup& out) {
  std::string joined;
  for (const auto& why : refusals) {
    if (why.empty()) return false;
    joined += (joined.empty() ? "" : "; ") + why;
  }
  out.result = KeyLookup::Result::kHandshakeFailed;
  out.error = joined;
  return true;
}

}  // namespace

KeyLookup lookup_key(const Options& options, std::string_view key, milliseconds timeout) {
  if (key.empty()) throw std::invalid_argument("lookup_key: empty key");
  if (options.servers.empty()) throw std::invalid_argument("lookup_key: no server");
  std::vector<ServerEndpoints> servers;
  for (const auto& s : options.servers) servers.push_back(parse_server(s));
  std::optional<zmq::context_t> own;
  zmq::context_t& ctx = options.context != nullptr ? *options.context : own.emplace(1);
  const auto deadline = Clock::now() + timeout;
  const milliseconds failover = std::max(milliseconds(1), options.failover_timeout);
  KeyLookup out;
  std::vector<std::string> refusals(servers.size());  // per server: its last handshake failure
  for (std::size_t turn = 0; Clock::now() < deadline; ++turn) {
    const ServerEndpoints& server = servers[turn % servers.size()];
    Request request = ask(ctx, server, key, options.security);
    Reply reply = await(request, key, failover, deadline);
    refusals[turn % servers.size()] = request.error;
    if (reply == Reply::kRefused && all_refused(refusals, out)) return out;
    if (reply == Reply::kFound || reply == Reply::kAbsent) {
      out.result = reply == Reply::kFound ? KeyLookup::Result::kFound : KeyLookup::Result::kAbsent;
      out.value = std::move(request.value);
      out.server = server.address;
      return out;
    }
  }
  return out;
}

}  // namespace zstore::client
