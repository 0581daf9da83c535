// PowerCut: a test seam that loses what a power cut loses. Its Env (pass it
// in storage::DatabaseOptions::env) keeps every byte appended to a file in
// memory until the file is synced (Sync or Fsync; RangeSync makes nothing
// durable), as the page cache of a machine that loses power does, in the
// style of leveldb's FaultInjectionTestEnv and RocksDB's FaultInjectionTestFS:
//   - a killed process (SIGKILL) loses what its open files had not synced;
//   - cut() also drops what closed files had not synced, and turns the power
//     off: every later write, create, rename or delete fails, so a database
//     left open cannot repair anything before it is abandoned and reopened
//     (with another Env, or a new PowerCut's).
// Directory entries (creates, renames, deletes) are taken as durable at
// once. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>

namespace rocksdb {
class Env;
}

namespace zstore::storage {

class PowerCut {
 public:
  virtual ~PowerCut() = default;
  // The Env whose files lose their unsynced bytes; lives as long as this.
  virtual std::shared_ptr<rocksdb::Env> env() = 0;
  // Truncates every file written through env() to what was synced, and
  // turns the power off (above). Idempotent.
  virtual void cut() = 0;
  // Unsynced bytes that cut() dropped, and bytes synced so far.
  virtual std::uint64_t dropped_bytes() const = 0;
  virtual std::uint64_t synced_bytes() const = 0;
};

std::unique_ptr<PowerCut> make_power_cut();

}  // namespace zstore::storage
