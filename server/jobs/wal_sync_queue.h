// WalSyncQueue: fsyncs the write-ahead log on a thread of its own when a
// reactor asks, so the reactor never waits for the disk. The reactor writes
// a batch without syncing it, takes a ticket with request(), keeps the
// batch's announcements (KVPUBs, ACKs) back, and sends them once durable()
// reaches the ticket: fd() turns readable whenever a sync ends. Requests
// made while a sync runs are covered by the next one (group commit).
// A failed sync fails every ticket it was to cover (outcome): those batches
// are never announced. One reactor thread uses the queue.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "storage/db/status.h"

namespace zstore::server {

class WalSyncQueue {
 public:
  // sync makes every write that returned before the call durable
  // (Database::sync_wal); it runs on the queue's thread only.
  explicit WalSyncQueue(std::function<storage::Status()> sync);
  ~WalSyncQueue();  // joins the thread after the last requested sync
  WalSyncQueue(const WalSyncQueue&) = delete;
  WalSyncQueue& operator=(const WalSyncQueue&) = delete;

  // A ticket covering every write that returned before this call.
  std::uint64_t request();
  // Whether ticket's sync succeeded, or nullopt while it runs. Asked in
  // increasing ticket order (the reactor's batches in order): results of
  // tickets below the one asked are forgotten.
  std::optional<bool> outcome(std::uint64_t ticket);
  // The message of the last failed sync ("" if none failed).
  std::string last_error() const;
  // Blocks until ticket is settled.
  void wait(std::uint64_t ticket);
  // Readable (poll) after a sync ended; take_signal() clears it.
  int fd() const { return fd_; }
  void take_signal();

 private:
  void run();

  std::function<storage::Status()> sync_;
  int fd_ = -1;
  mutable std::mutex mu_;
  std::condition_variable work_;     // the thread waits for a request or the stop
  std::condition_variable settled_;  // wait() waits for a settled ticket
  std::uint64_t requested_ = 0;      // guarded by mu_, as the fields below
  // Settled syncs not yet forgotten, oldest first: (last ticket, ok).
  std::deque<std::pair<std::uint64_t, bool>> results_;
  std::string last_error_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace zstore::server
