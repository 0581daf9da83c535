// ChpServer's answers to the HA peer's requests on the snapshot socket
// (docs/operations.md, "High availability"): the history or map a hand-over
// takes (RECONCILE?), a passive's catch-up after a gap (CATCHUP?) and its
// acknowledgements (PEERACK); who may send them is may_ask_as_peer's
// (chp_server_acl.cc). Also what every snapshot's KTHXBAI says.
#include <spdlog/spdlog.h>

#include "protocol/byte_order.h"
#include "protocol/chp_key_history.h"
#include "protocol/chp_writes.h"
#include "server/chp/chp_server.h"

namespace zstore::server {

namespace chp = protocol::chp;

std::string ChpServer::kthxbai_properties(bool resumed) const {
  std::vector<chp::Property> props{{std::string(chp::kEpochsProperty), storage::format_epochs(store_.epochs())}};
  if (store_.history_from() != UINT64_MAX && store_.keeps_history()) {
    props.emplace_back(chp::kHistoryFromProperty, std::to_string(store_.history_from()));
  }
  if (resumed) props.emplace_back(chp::kResumedProperty, "1");
  if (replica_stale()) {  // docs/replicas.md: the map may be older than the upstream's
    auto silent = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - follower_->last_heard());
    props.emplace_back(chp::kStaleProperty, std::to_string(silent.count()));
  }
  props.emplace_back(chp::kWritesProperty, "1");  // takes WRITE? (protocol/chp_writes.h)
  // HISTORY? (chp_key_history.h): only with --chp-key-history.
  if (store_.keeps_key_history()) props.emplace_back(chp::kKeyHistoryProperty, "1");
  return chp::format_properties(props);
}

void ChpServer::serve_reconcile(const std::string& identity, const ReceivedMessage& msg) {
  if (msg.views.size() != 3 || msg.views[2].size() != 8) {
    report_malformed("reconcile request", {protocol::DecodeErrorKind::kFrameCount, "RECONCILE? needs 2 frames"});
    return;
  }
  std::uint64_t after = protocol::get_be<std::uint64_t>(msg.views[2]);
  auto cursor = store_.history_after(after);
  bool complete = cursor != nullptr;
  if (!cursor) cursor = store_.snapshot("");  // the whole map: the peer keeps what came after `after`
  spdlog::info("HA: the peer asks for our updates after sequence {} (our last {}): sending {}", after,
               store_.last_sequence(), complete ? "our history" : "our whole map (history too short)");
  (void)snapshots_.start(identity, "", std::move(cursor), complete ? "complete=1\n" : "complete=0\n", true, {}, true);
}

void ChpServer::take_peer_ack(const ReceivedMessage& msg) {
  if (msg.views.size() != 3 || msg.views[2].size() != 8) {
    report_malformed("write acknowledgement", {protocol::DecodeErrorKind::kFrameCount, "PEERACK needs 2 frames"});
    return;
  }
  if (ha_) ha_->take_peer_ack(protocol::get_be<std::uint64_t>(msg.views[2]));
}

namespace {

// What a catch-up the history cannot serve sends before its bare KTHXBAI.
class NothingAfter : public storage::ChpSnapshotCursor {
 public:
  explicit NothingAfter(std::uint64_t sequence) : sequence_(sequence) {}
  std::uint64_t sequence() const override { return sequence_; }
  bool next(storage::ChpRecord*) override { return false; }
  storage::Status status() const override { return storage::Status::Ok(); }

 private:
  std::uint64_t sequence_;
};

}  // namespace

// The follower's catch-up after a gap: a vote like its snapshot request.
void ChpServer::serve_catchup(const std::string& identity, const ReceivedMessage& msg) {
  if (msg.views.size() != 3 || msg.views[2].size() != 8) {
    report_malformed("catch-up request", {protocol::DecodeErrorKind::kFrameCount, "CATCHUP? needs 2 frames"});
    return;
  }
  if (!accept_vote()) return;
  std::uint64_t after = protocol::get_be<std::uint64_t>(msg.views[2]);
  auto cursor = store_.resume_after(after, "");
  bool resumed = cursor != nullptr;
  if (resumed) metrics_.resumes.fetch_add(1, std::memory_order_relaxed);
  if (!cursor) cursor = std::make_unique<NothingAfter>(store_.last_sequence());
  spdlog::info("HA: the passive catches up after sequence {} (our last {}): {}", after, store_.last_sequence(),
               resumed ? "sending our history" : "history too short, it will ask for the whole map");
  (void)snapshots_.start(identity, "", std::move(cursor), kthxbai_properties(resumed), true, {}, true);
}

}  // namespace zstore::server
