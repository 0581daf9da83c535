// WalSyncer: the fsync of the --sync batch policy, on a thread of its own.
// Every interval in which something was written, it syncs the database's
// write-ahead log, so no reactor waits for the disk (an fsync takes
// milliseconds: done by a reactor, it delayed every message behind it).
// Writes still reach the log before they are published or ACKed: a process
// crash loses nothing, a machine crash at most about one interval. While
// writes are failing it waits quietly: the next successful write (which
// recovers the database first) brings it back.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "server/reactor/log.h"
#include "server/jobs/periodic_thread.h"
#include "storage/db/database.h"

namespace zstore::server {

class WalSyncer {
 public:
  // db must outlive the syncer.
  WalSyncer(storage::Database& db, std::chrono::milliseconds interval);
  ~WalSyncer();
  WalSyncer(const WalSyncer&) = delete;
  WalSyncer& operator=(const WalSyncer&) = delete;

  void start();
  // Syncs what is still unsynced, then joins the thread. Idempotent.
  void stop();

  // Sync attempts so far, failed ones included (tests).
  std::uint64_t syncs() const;

 private:
  void sync();

  storage::Database& db_;
  std::chrono::milliseconds interval_;
  RateLimiter error_log_;  // the syncer thread's only
  std::atomic<std::uint64_t> syncs_{0};
  PeriodicThread thread_{interval_};
};

}  // namespace zstore::server
