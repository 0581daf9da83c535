#include "client/key_history.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include <zmq.hpp>

#include "client/one_shot_snapshot.h"
#include "client/server_request.h"
#include "client/server_endpoints.h"
#include "client/snapshot_sync.h"
#include "transport/zmq_frames.h"

namespace zstore::client {
namespace {

namespace chp = protocol::chp;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using R = KeyHistory::Result;

// One HISTORY? to one server: its versions and end marker, or nullopt when
// it was silent until silent_at, cut its answer short, or the handshake
// failed.
std::optional<KeyHistory> ask(zmq::context_t& ctx, const Options& options, const std::string& server,
                              const chp::HistoryRequest& request, Clock::time_point silent_at) {
  ServerRequest dealer(ctx, options.security, parse_server(server).snapshot);
  dealer.send(chp::encode_history_request(request));
  KeyHistory out;
  while (true) {
    transport::Message msg;
    std::string why;
    if (dealer.receive(silent_at, &msg, &why) != ServerRequest::Received::kMessage) return std::nullopt;
    if (msg.views.empty()) continue;
    if (msg.views[0] == chp::kKvHistCommand) {
      auto v = chp::decode_kvhist(msg.views);
      if (!v || v->key != request.key) return std::nullopt;  // not our answer: a broken server
      out.versions.push_back(std::move(v).value());
      continue;
    }
    auto end = chp::decode_history_end(msg.views);
    if (!end || end->key != request.key) continue;
    if (end->outcome == chp::HistoryEnd::Outcome::kOk && end->count != out.versions.size()) return std::nullopt;
    out.result = end->outcome == chp::HistoryEnd::Outcome::kOk        ? R::kOk
                 : end->outcome == chp::HistoryEnd::Outcome::kRefused ? R::kRefused
                                                                      : R::kFailed;
    out.detail = std::move(end->detail);
    return out;
  }
}

}  // namespace

const char* to_string(KeyHistory::Result result) {
  switch (result) {
    case R::kOk:
      return "ok";
    case R::kRefused:
      return "refused";
    case R::kFailed:
      return "failed";
    case R::kNoAnswer:
      return "no answer";
    case R::kUnsupported:
      return "unsupported";
    case R::kHandshakeFailed:
      return "handshake failed";
  }
  return "?";
}

KeyHistory key_history(const Options& options, std::string_view key, std::uint64_t limit, milliseconds timeout) {
  if (key.empty()) throw std::invalid_argument("key_history: empty key");
  if (limit == 0 || limit > chp::kMaxHistoryLimit) throw std::invalid_argument("key_history: limit not 1..1000");
  const auto deadline = Clock::now() + timeout;
  const milliseconds failover = std::max(milliseconds(1), options.failover_timeout);
  std::optional<zmq::context_t> own;
  Options o = options;
  if (o.context == nullptr) o.context = &own.emplace(1);
  const chp::HistoryRequest request{std::string(key), limit};
  KeyHistory out;
  while (Clock::now() < deadline) {
    // An empty snapshot (no key can be KTHXBAI) from whichever server
    // answers clients now: its KTHXBAI says whether it answers HISTORY?.
    auto found = one_shot_snapshot(
        o, chp::kKthxbai, time_until(deadline), [](chp::KvMsg&&) { return true; }, [] {});
    if (found.result == OneShotSnapshot::Result::kHandshakeFailed) {
      out.result = R::kHandshakeFailed;
      out.detail = found.error;
      return out;
    }
    if (found.result != OneShotSnapshot::Result::kComplete) break;
    out.server = found.server;
    if (!read_kthxbai(found.properties).key_history) {
      out.result = R::kUnsupported;
      return out;
    }
    auto got = ask(*o.context, o, found.server, request, std::min(deadline, Clock::now() + failover));
    if (!got) continue;  // silent or cut short: ask again, maybe the other server
    got->server = found.server;
    return std::move(*got);
  }
  out.result = R::kNoAnswer;
  return out;
}

}  // namespace zstore::client
