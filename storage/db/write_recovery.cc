#include "storage/db/write_recovery.h"

#include <rocksdb/db.h>

namespace zstore::storage {
namespace {

// What write() returns while writes are refused after failure: for good,
// or until the next recovery attempt (with failure's code: the cause).
Status writes_stopped(const Status& failure) {
  return Status::Refused("writes stopped after an unrecoverable storage error (restart to recover): " +
                         failure.message());
}
Status writes_suspended(const Status& failure, std::string_view recovery = {}) {
  return Status(failure.code(), "writes suspended after a storage error: " + failure.message() + std::string(recovery));
}

}  // namespace

void WriteRecovery::note(const Status& s) {
  std::lock_guard lock(state_mutex_);
  failing_ = !s.ok();
  if (!s.ok()) last_failure_ = s;
}

bool WriteRecovery::due(std::chrono::milliseconds interval, Status* refusal) {
  std::lock_guard lock(state_mutex_);
  *refusal = Status::Ok();
  if (!failing_) return false;
  if (unrecoverable_) {
    *refusal = writes_stopped(last_failure_);
    return false;
  }
  auto now = std::chrono::steady_clock::now();
  if (now < next_resume_) {
    *refusal = writes_suspended(last_failure_);
    return false;
  }
  next_resume_ = now + interval;
  return true;
}

// RocksDB keeps a background error after a failed log or table write and
// refuses writes until DB::Resume() succeeds (it flushes the memtables, so
// a log that may hold an unacknowledged record is no longer replayed).
Status WriteRecovery::recover(rocksdb::DB* db, std::mutex* sync_mutex, std::chrono::milliseconds interval) {
  if (!failing()) return Status::Ok();
  // Writers that find writes failing wait for a Resume under way, then
  // decide from what it left (as one recovery at a time would).
  std::lock_guard resume_lock(resume_mutex_);
  Status refusal = Status::Ok();
  if (!due(interval, &refusal)) return refusal;
  rocksdb::Status rs;
  {
    std::lock_guard sync_lock(*sync_mutex);
    rs = db->Resume();
  }
  if (rs.ok() || rs.IsNotSupported()) return Status::Ok();
  std::lock_guard lock(state_mutex_);
  if (rs.severity() >= rocksdb::Status::Severity::kFatalError) {
    unrecoverable_ = true;
    return writes_stopped(last_failure_);
  }
  // Resume's own status is context only: the failure it could not undo is the cause.
  return writes_suspended(last_failure_, "; recovery: " + rs.ToString());
}

bool WriteRecovery::failing() const {
  std::lock_guard lock(state_mutex_);
  return failing_;
}

bool WriteRecovery::unrecoverable() const {
  std::lock_guard lock(state_mutex_);
  return unrecoverable_;
}

Status WriteRecovery::failure() const {
  std::lock_guard lock(state_mutex_);
  return failing_ ? last_failure_ : Status::Ok();
}

std::string WriteRecovery::last_error() const {
  std::lock_guard lock(state_mutex_);
  return last_failure_.message();
}

}  // namespace zstore::storage
