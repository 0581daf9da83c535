// Internal to storage: the one conversion of a rocksdb::Status to ours.
// The message is "<what>: " and RocksDB's ToString() ("IO error: ...").
#pragma once

#include <rocksdb/status.h>

#include <string>
#include <string_view>

#include "storage/db/status.h"

namespace zstore::storage {

inline Status::Code rocks_code(const rocksdb::Status& s) {
  if (s.ok()) return Status::Code::kOk;
  // Before IsIOError: RocksDB reports ENOSPC as an IOError with a subcode.
  if (s.IsNoSpace()) return Status::Code::kNoSpace;
  if (s.IsIOError()) return Status::Code::kIoError;
  if (s.IsCorruption()) return Status::Code::kCorruption;
  if (s.IsInvalidArgument()) return Status::Code::kInvalidArgument;
  // The rest (Busy, TimedOut, Aborted, NotSupported, ShutdownInProgress...)
  // are RocksDB failing, for now, to do storage work we asked for; the
  // expected ones (NotFound) are tested by callers before converting. Like
  // an I/O error they say nothing about the data and may pass on a retry.
  return Status::Code::kIoError;
}

inline Status from_rocks(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return Status::Ok();
  return Status(rocks_code(s), std::string(what) + ": " + s.ToString());
}

}  // namespace zstore::storage
