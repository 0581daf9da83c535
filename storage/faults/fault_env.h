// FaultEnv: a test seam that makes RocksDB's file writes fail on demand.
// WriteFaults is a switch shared between a test and the Env made by
// make_fault_env(): while armed, every write-side operation of the chosen
// file kinds (creating, appending to, syncing a write-ahead log, table or
// MANIFEST file) returns the chosen error instead of reaching the disk;
// nothing is written, so a failed append leaves no torn record. Disarmed, the
// Env is the default one. Thread-safe; RocksDB's background threads see
// arm()/disarm() at once. Pass the Env in storage::DatabaseOptions::env.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>

namespace rocksdb {
class Env;
}

namespace zstore::storage {

enum class FaultFiles : unsigned {
  kWal = 1,       // <number>.log
  kTable = 2,     // <number>.sst
  kManifest = 4,  // MANIFEST-*, CURRENT and its temporary
  kAll = 7,
};

// kIoError is reported like EIO (RocksDB treats a failed log write with it as
// unrecoverable until the database is reopened); kNoSpace like ENOSPC
// (RocksDB resumes once space is back; checked against a real full tmpfs).
enum class FaultError { kIoError, kNoSpace };

// Which operations fail: kWrites = create, append, sync (nothing reaches the
// file; with kNoSpace files are still created, as on a real full disk);
// kSyncs = only Sync/Fsync (the data was written, not made durable).
enum class FaultOps { kWrites, kSyncs };

class WriteFaults {
 public:
  void arm(FaultFiles files = FaultFiles::kAll, FaultOps ops = FaultOps::kWrites,
           FaultError error = FaultError::kIoError);
  void disarm() { files_.store(0); }
  bool armed() const { return files_.load() != 0; }

  // Whether an operation on file (a path or name) must fail now; counts it.
  bool should_fail(std::string_view file, bool is_sync);
  FaultError error() const { return error_.load(); }
  // Operations failed so far.
  std::uint64_t injected() const { return injected_.load(); }

 private:
  std::atomic<unsigned> files_{0};
  std::atomic<FaultOps> ops_{FaultOps::kWrites};
  std::atomic<FaultError> error_{FaultError::kIoError};
  std::atomic<std::uint64_t> injected_{0};
};

// The kind of a RocksDB file from its name, or 0 for a file never failed
// (LOCK, LOG, OPTIONS, ...).
unsigned fault_file_kind(std::string_view file);

// The default Env with its file system wrapped by faults.
std::shared_ptr<rocksdb::Env> make_fault_env(std::shared_ptr<WriteFaults> faults);

}  // namespace zstore::storage
