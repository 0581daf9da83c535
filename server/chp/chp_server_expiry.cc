// ChpServer's timed deletes: TTL expiries swept from the store's index
// (only by whoever serves clients), and the history's age bound.
#include <spdlog/spdlog.h>

#include "server/chp/chp_server.h"

namespace zstore::server {

void ChpServer::expire_due() {
  if (!serving() || config_.replica) return;  // a passive or replica applies its upstream's expiries
  auto now = Clock::now();
  if (now < next_expiry_ && !expiry_backlog_) return;
  next_expiry_ = now + config_.expiry_interval;
  constexpr std::size_t kLimit = 1024;
  std::vector<storage::ChpStore::Due> due;
  storage::Status s = store_.due_expiries(config_.now_ms(), kLimit, &due);
  if (!s.ok()) {
    write_error_log_.log(spdlog::level::err, "expiry sweep failed: {}", s.message());
    return;
  }
  expiry_backlog_ = due.size() == kLimit;
  if (due.empty()) return;
  std::vector<storage::ChpWrite> writes;
  writes.reserve(due.size());
  for (auto& d : due) writes.push_back({std::move(d.key), {}, {}, {}, 0, 0, config_.now_ms()});
  std::uint64_t before = metrics_.updates_applied;
  commit_and_publish(writes);
  if (metrics_.updates_applied != before) metrics_.expiries.fetch_add(writes.size(), std::memory_order_relaxed);
}

void ChpServer::trim_history_by_age() {
  if (config_.history_max_age.count() <= 0) return;
  auto now = Clock::now();
  if (now < next_history_trim_) return;
  std::uint64_t from = store_.history_from();
  std::uint64_t age = static_cast<std::uint64_t>(config_.history_max_age.count());
  std::uint64_t now_ms = config_.now_ms();
  storage::Status s = store_.trim_history_older_than(now_ms > age ? now_ms - age : 0);
  // Again at the next turn while it drops entries (a backlog), else in a second.
  bool more = s.ok() && store_.history_from() != from;
  next_history_trim_ = now + (more ? std::chrono::milliseconds(0) : std::chrono::milliseconds(1000));
  if (!s.ok()) write_error_log_.log(spdlog::level::err, "history trim failed: {}", s.message());
}

void ChpServer::sweep_expiries_now() {
  next_expiry_ = Clock::time_point{};
  expiry_backlog_ = true;  // the next turns sweep, kLimit keys each, until nothing is due
}

}  // namespace zstore::server
