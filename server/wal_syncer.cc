#include "server/wal_syncer.h"

#include <spdlog/spdlog.h>

#include "server/log.h"

namespace zstore::server {

WalSyncer::WalSyncer(storage::Database& db, std::chrono::milliseconds interval) : db_(db), interval_(interval) {}

WalSyncer::~WalSyncer() { stop(); }

void WalSyncer::start() { thread_ = std::thread([this] { run(); }); }

void WalSyncer::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::uint64_t WalSyncer::syncs() const {
  std::lock_guard lock(mutex_);
  return syncs_;
}

void WalSyncer::run() {
  RateLimiter error_log;
  std::unique_lock lock(mutex_);
  while (true) {
    bool stopping = wake_.wait_for(lock, interval_, [this] { return stopping_; });
    lock.unlock();
    // While writes fail there is nothing to sync (RocksDB refuses until it
    // has recovered) and the failure is reported where it happened; the
    // write that succeeds again marks the log unsynced, and syncing resumes.
    if (!db_.write_failing() && db_.take_unsynced()) {
      storage::Status s = db_.sync_wal();
      if (!s.ok()) error_log.log(spdlog::level::err, "{}", s.message());
      lock.lock();
      ++syncs_;
    } else {
      lock.lock();
    }
    if (stopping) return;
  }
}

}  // namespace zstore::server
