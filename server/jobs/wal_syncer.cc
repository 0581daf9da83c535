#include "server/jobs/wal_syncer.h"

#include <spdlog/spdlog.h>

#include "server/reactor/log.h"

namespace zstore::server {

WalSyncer::WalSyncer(storage::Database& db, std::chrono::milliseconds interval) : db_(db), interval_(interval) {}

WalSyncer::~WalSyncer() { stop(); }

void WalSyncer::start() {
  thread_.start([this] { sync(); }, [this] { sync(); });  // and once more at stop: what is still unsynced
}

void WalSyncer::stop() { thread_.stop(); }

std::uint64_t WalSyncer::syncs() const { return syncs_.load(); }

void WalSyncer::sync() {
  // While writes fail there is nothing to sync (RocksDB refuses until it
  // has recovered) and the failure is reported where it happened; the
  // write that succeeds again marks the log unsynced, and syncing resumes.
  if (db_.write_failing() || !db_.take_unsynced()) return;
  storage::Status s = db_.sync_wal();
  if (!s.ok()) error_log_.log(spdlog::level::err, "{}", s.message());
  ++syncs_;
}

}  // namespace zstore::server
