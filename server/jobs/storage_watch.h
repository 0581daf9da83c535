// StorageWatch: a live zstored never sits on a database that refuses every
// write for good. Once a write has failed in a way RocksDB cannot recover
// from without a reopen (Database::write_unrecoverable: an EIO, a log it
// could not create while the process was out of file descriptors), it logs
// why and raises SIGTERM, so zstored stops as cleanly as it can and exits
// 1, and its supervisor (systemd's Restart=on-failure, a container restart
// policy) starts it again on the same directory, where RocksDB recovers.
// Checked every interval on a thread of its own; /healthz says the same
// meanwhile (http_health.h).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>

#include "server/jobs/periodic_thread.h"
#include "storage/db/database.h"

namespace zstore::server {

class StorageWatch {
 public:
  // on_stopped: what to do once (default: raise SIGTERM in this process).
  StorageWatch(storage::Database& db, std::chrono::milliseconds interval, std::function<void()> on_stopped = {});
  StorageWatch(const StorageWatch&) = delete;
  StorageWatch& operator=(const StorageWatch&) = delete;

  void start();
  void stop() { thread_.stop(); }
  // Whether it found the storage stopped (and raised SIGTERM).
  bool stopped() const { return stopped_.load(std::memory_order_acquire); }
  // One check now.
  void check();

 private:
  storage::Database& db_;
  std::function<void()> on_stopped_;
  std::atomic<bool> stopped_{false};
  PeriodicThread thread_;
};

}  // namespace zstore::server
