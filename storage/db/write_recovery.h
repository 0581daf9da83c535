// WriteRecovery: what a Database knows of its failed writes, and their
// recovery. note() records the outcome of each write or sync; after a
// failure, recover() asks RocksDB to resume (DB::Resume) at most once per
// interval, one call at a time, until the database writes again or is found
// unrecoverable (then writes stay refused until it is reopened).
// The readers (failing(), unrecoverable(), failure(), last_error()) take
// only a small mutex that no Resume holds: they answer at once, also while
// a Resume runs (a reactor or /metrics asking never waits for one).
// Thread-safe.
#pragma once

#include <chrono>
#include <mutex>
#include <string>

#include "storage/db/status.h"

namespace rocksdb {
class DB;
}

namespace zstore::storage {

class WriteRecovery {
 public:
  // Records a write's or a sync's outcome: a failure starts the failing
  // state, a success ends it.
  void note(const Status& s);
  // Ok when writes are not failing, or when a Resume of db (called under
  // *sync_mutex, so never beside a SyncWAL) let them go on; otherwise why
  // they are refused: suspended (with the failure's code) until a later
  // attempt, at most one per interval, or stopped for good (IsRefused).
  Status recover(rocksdb::DB* db, std::mutex* sync_mutex, std::chrono::milliseconds interval);

  // Whether writes are failing (the last write or sync failed).
  bool failing() const;
  // Whether they fail until the database is reopened.
  bool unrecoverable() const;
  // The last failure while writes are failing, else Ok.
  Status failure() const;
  // The message of the last failure ("" if none failed).
  std::string last_error() const;

 private:
  // Whether this call is to resume now (under state_mutex_); when not,
  // *refusal is what recover() returns (Ok when nothing failed).
  bool due(std::chrono::milliseconds interval, Status* refusal);

  std::mutex resume_mutex_;         // one recovery at a time; held across DB::Resume
  mutable std::mutex state_mutex_;  // never held across DB::Resume
  bool failing_ = false;            // guarded by state_mutex_, as the three below
  bool unrecoverable_ = false;
  std::chrono::steady_clock::time_point next_resume_{};
  Status last_failure_ = Status::Ok();
};

}  // namespace zstore::storage
