#include "client/confirmed_write.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include <zmq.hpp>

#include "client/one_shot_snapshot.h"
#include "client/server_endpoints.h"
#include "client/server_request.h"
#include "client/snapshot_sync.h"
#include "client/uuid.h"
#include "transport/zmq_frames.h"

namespace zstore::client {
namespace {

namespace chp = protocol::chp;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using R = WriteResult::Result;

// The outcome of one WRITE? to one server; nullopt when it was silent
// until silent_at or the security handshake failed (the next probe
// reports a failed handshake).
std::optional<chp::WriteOutcome> send_and_wait(zmq::context_t& ctx, const Options& options, const std::string& server,
                                               const protocol::Frames& request, std::string_view uuid,
                                               Clock::time_point silent_at) {
  ServerRequest dealer(ctx, options.security, parse_server(server).snapshot);
  dealer.send(request);
  transport::Message msg;
  std::string why;
  while (dealer.receive(silent_at, &msg, &why) == ServerRequest::Received::kMessage) {
    auto outcome = chp::decode_written(msg.views);
    if (outcome && outcome->uuid == uuid) return std::move(outcome).value();
  }
  return std::nullopt;
}

}  // namespace

const char* to_string(WriteResult::Result result) {
  switch (result) {
    case R::kApplied:
      return "applied";
    case R::kRefused:
      return "refused";
    case R::kFailed:
      return "failed";
    case R::kUnknown:
      return "unknown";
    case R::kNoAnswer:
      return "no answer";
    case R::kUnsupported:
      return "unsupported";
    case R::kHandshakeFailed:
      return "handshake failed";
  }
  return "?";
}

WriteResult confirmed_write(const Options& options, std::string_view key, std::string_view value,
                            std::uint64_t ttl_seconds, const chp::Precondition& precondition, milliseconds timeout) {
  if (key.empty() || chp::is_reserved_key(key)) throw std::invalid_argument("confirmed_write: empty or reserved key");
  const auto deadline = Clock::now() + timeout;
  const milliseconds failover = std::max(milliseconds(1), options.failover_timeout);
  std::optional<zmq::context_t> own;
  Options o = options;
  if (o.context == nullptr) o.context = &own.emplace(1);
  WriteResult out;
  out.uuid = random_uuid();
  const std::string properties = ttl_seconds > 0 && !value.empty() ? "ttl=" + std::to_string(ttl_seconds) + "\n" : "";
  const auto request = chp::encode_write(key, out.uuid, properties, value, precondition);
  bool sent = false;
  while (Clock::now() < deadline) {
    // An empty snapshot (no key can be KTHXBAI) from whichever server
    // answers clients now: its KTHXBAI says whether it takes WRITE?.
    auto found = one_shot_snapshot(
        o, chp::kKthxbai, time_until(deadline), [](chp::KvMsg&&) { return true; }, [] {});
    if (found.result == OneShotSnapshot::Result::kHandshakeFailed) {
      out.result = R::kHandshakeFailed;
      out.detail = found.error;
      return out;
    }
    if (found.result != OneShotSnapshot::Result::kComplete) break;
    out.server = found.server;
    if (!read_kthxbai(found.properties).takes_writes) {
      out.result = R::kUnsupported;
      return out;
    }
    auto outcome =
        send_and_wait(*o.context, o, found.server, request, out.uuid, std::min(deadline, Clock::now() + failover));
    sent = true;
    if (!outcome || outcome->kind == chp::WriteOutcome::Kind::kNotActive) continue;  // the pair fails over
    out.result = outcome->kind == chp::WriteOutcome::Kind::kApplied   ? R::kApplied
                 : outcome->kind == chp::WriteOutcome::Kind::kRefused ? R::kRefused
                 : outcome->kind == chp::WriteOutcome::Kind::kUnknown ? R::kUnknown
                                                                      : R::kFailed;
    out.sequence = outcome->sequence;
    out.detail = std::move(outcome->detail);
    return out;
  }
  out.result = sent ? R::kUnknown : R::kNoAnswer;
  return out;
}

}  // namespace zstore::client
