// DumpSource: a zstore data directory opened read-only for zstore-dump
// (RocksDB OpenForReadOnly through storage::Database): no lock is taken, so
// it works while zstored runs on the directory, and the write-ahead log is
// replayed in memory, so writes a killed server had not flushed are seen.
// Nothing in the directory is created or modified. The view is the state at
// open time.
#pragma once

#include <memory>
#include <string>

#include "storage/db/database.h"

namespace zstore::dump {

struct OpenResult {
  std::unique_ptr<storage::Database> db;  // null on failure
  std::string error;                      // why, naming the directory
  bool io_error = false;                  // the failure was RocksDB failing to read a file
};

// Fails (with a message) for a missing path, a non-directory, a directory
// that is not a zstore database (empty, or a RocksDB without our column
// families), an unknown layout version or a database RocksDB cannot open;
// io_error tells an I/O failure (exit 1) from an unusable directory (exit 2).
OpenResult open_read_only(const std::string& dir);

}  // namespace zstore::dump
