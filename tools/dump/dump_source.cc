#include "tools/dump/dump_source.h"

#include <chrono>
#include <filesystem>
#include <thread>

namespace zstore::dump {
namespace {

// A running zstored may delete a log file between RocksDB listing and
// reading it (after a flush); a second attempt sees the new state.
constexpr int kAttempts = 3;
constexpr auto kRetryPause = std::chrono::milliseconds(50);

}  // namespace

OpenResult open_read_only(const std::string& dir) {
  OpenResult result;
  std::error_code ec;
  auto status = std::filesystem::status(dir, ec);
  if (!std::filesystem::exists(status)) {
    result.error = "data dir '" + dir + "' does not exist";
    return result;
  }
  if (!std::filesystem::is_directory(status)) {
    result.error = "data dir '" + dir + "' is not a directory";
    return result;
  }
  storage::DatabaseOptions options;
  options.read_only = true;
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    storage::Status s = storage::Database::Open(dir, options, &result.db);
    if (s.ok()) return result;
    result.db.reset();
    result.error = s.message();
    result.io_error = s.IsIoError() || s.IsNoSpace();                                 // RocksDB could not read a file
    if (!std::filesystem::exists(std::filesystem::path(dir) / "CURRENT", ec)) break;  // nothing to retry
    if (attempt < kAttempts) std::this_thread::sleep_for(kRetryPause);
  }
  return result;
}

}  // namespace zstore::dump
