#include "client/one_shot_snapshot.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <vector>

#include <zmq.hpp>

#include "client/server_endpoints.h"
#include "client/server_request.h"
#include "transport/zmq_frames.h"

namespace zstore::client {
namespace {

namespace chp = protocol::chp;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How one request to one server ended.
enum class Reply : std::uint8_t { kComplete, kStopped, kSilent, kMalformed, kRefused };

struct Request {
  ServerRequest dealer;
  std::uint64_t sequence = 0;  // kComplete
  std::string properties;      // kComplete
  std::string error;           // kRefused: why the handshake failed
};

Request ask(zmq::context_t& ctx, const ServerEndpoints& server, std::string_view prefix,
            const security::SocketSecurity& security) {
  Request r{ServerRequest(ctx, security, server.snapshot), 0, {}, {}};
  r.dealer.send(chp::encode_icanhaz({std::string(prefix), std::nullopt}));
  return r;
}

// Reads replies until on_entry stops, KTHXBAI, silence for failover or the
// deadline. After a malformed reply the stream is incomplete (the bad
// entry may have been any key): its KTHXBAI then counts as kMalformed.
Reply await(Request& r, const SnapshotEntry& on_entry, milliseconds failover, Clock::time_point deadline) {
  auto silent_at = Clock::now() + failover;
  bool spoiled = false;
  while (true) {
    transport::Message msg;
    auto got = r.dealer.receive(std::min(silent_at, deadline), &msg, &r.error);
    if (got == ServerRequest::Received::kSilent) return Reply::kSilent;
    if (got == ServerRequest::Received::kHandshakeFailed) return Reply::kRefused;
    silent_at = Clock::now() + failover;
    auto reply = chp::decode_snapshot_reply(msg.views);
    if (!reply) {
      spoiled = true;
      continue;
    }
    if (auto* done = std::get_if<chp::Kthxbai>(&*reply)) {
      r.sequence = done->sequence;
      r.properties = std::move(done->properties);
      return spoiled ? Reply::kMalformed : Reply::kComplete;
    }
    if (!on_entry(std::get<chp::KvMsg>(std::move(*reply))))
      return Reply::kStopped;  // an entry is good even after a bad one
  }
}

// Whether every server's last handshake failed; if so, fills out.
bool all_refused(const std::vector<std::string>& refusals, OneShotSnapshot& out) {
  std::string joined;
  for (const auto& why : refusals) {
    if (why.empty()) return false;
    joined += (joined.empty() ? "" : "; ") + why;
  }
  out.result = OneShotSnapshot::Result::kHandshakeFailed;
  out.error = joined;
  return true;
}

}  // namespace

OneShotSnapshot one_shot_snapshot(const Options& options, std::string_view prefix, milliseconds timeout,
                                  const SnapshotEntry& on_entry, const SnapshotRestart& on_restart) {
  if (options.servers.empty()) throw std::invalid_argument("snapshot request: no server");
  std::vector<ServerEndpoints> servers;
  for (const auto& s : options.servers) servers.push_back(parse_server(s));
  std::optional<zmq::context_t> own;
  zmq::context_t& ctx = options.context != nullptr ? *options.context : own.emplace(1);
  const auto deadline = Clock::now() + timeout;
  const milliseconds failover = std::max(milliseconds(1), options.failover_timeout);
  OneShotSnapshot out;
  std::vector<std::string> refusals(servers.size());  // per server: its last handshake failure
  for (std::size_t turn = 0; Clock::now() < deadline; ++turn) {
    if (turn > 0) on_restart();
    const ServerEndpoints& server = servers[turn % servers.size()];
    Request request = ask(ctx, server, prefix, options.security);
    Reply reply = await(request, on_entry, failover, deadline);
    refusals[turn % servers.size()] = request.error;
    if (reply == Reply::kRefused && all_refused(refusals, out)) return out;
    if (reply == Reply::kComplete || reply == Reply::kStopped) {
      out.result = reply == Reply::kComplete ? OneShotSnapshot::Result::kComplete : OneShotSnapshot::Result::kStopped;
      out.sequence = request.sequence;
      out.properties = std::move(request.properties);
      out.server = server.address;
      return out;
    }
  }
  return out;
}

}  // namespace zstore::client
