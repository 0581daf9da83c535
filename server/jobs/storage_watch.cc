#include "server/jobs/storage_watch.h"

#include <signal.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

namespace zstore::server {

StorageWatch::StorageWatch(storage::Database& db, std::chrono::milliseconds interval, std::function<void()> on_stopped)
    : db_(db), on_stopped_(std::move(on_stopped)), thread_(interval) {
  if (!on_stopped_) on_stopped_ = [] { ::kill(::getpid(), SIGTERM); };
}

void StorageWatch::start() {
  thread_.start([this] { check(); });
}

void StorageWatch::check() {
  if (stopped() || !db_.write_unrecoverable()) return;
  stopped_.store(true, std::memory_order_release);
  spdlog::critical("storage stopped: {}; exiting so that zstored is started again (RocksDB recovers at open)",
                   db_.last_write_error());
  on_stopped_();
}

}  // namespace zstore::server
