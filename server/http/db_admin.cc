#include "server/http/db_admin.h"

#include <rocksdb/db.h>
#include <rocksdb/utilities/checkpoint.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "storage/db/background_pacing.h"

namespace zstore::server {
namespace fs = std::filesystem;

namespace {

std::uint64_t int_property(storage::Database& db, storage::Column column, const std::string& name) {
  std::uint64_t value = 0;
  if (!db.db()->GetIntProperty(db.handle(column), name, &value)) return 0;
  return value;
}

// "rocksdb.num-files-at-level<N>" is a string property only.
std::uint64_t level0_files(storage::Database& db, storage::Column column) {
  std::string value;
  if (!db.db()->GetProperty(db.handle(column), rocksdb::DB::Properties::kNumFilesAtLevelPrefix + std::string("0"),
                            &value)) {
    return 0;
  }
  return std::strtoull(value.c_str(), nullptr, 10);
}

}  // namespace

std::vector<ColumnSizes> column_sizes(storage::Database& db) {
  std::vector<ColumnSizes> out;
  for (std::size_t i = 0; i < storage::kColumnCount; ++i) {
    auto column = static_cast<storage::Column>(i);
    out.push_back({std::string(storage::column_name(column)),
                   int_property(db, column, rocksdb::DB::Properties::kLiveSstFilesSize),
                   int_property(db, column, rocksdb::DB::Properties::kCurSizeAllMemTables), level0_files(db, column),
                   int_property(db, column, rocksdb::DB::Properties::kNumImmutableMemTable),
                   int_property(db, column, rocksdb::DB::Properties::kEstimatePendingCompactionBytes)});
  }
  return out;
}

WriteStalls write_stalls(storage::Database& db) {
  WriteStalls out;
  storage::WriteHold hold;
  (void)storage::write_hold(db.db(), &hold);  // unknown: not held back
  out.delayed = hold.delayed;
  out.stopped = hold.stopped;
  if (auto* pacing = db.pacing()) {
    pacing->reconcile(db.db());
    auto stats = pacing->stats();
    out.delays = stats.delays;
    out.stops = stats.stops;
    out.paced = db.paces_background();
    out.pacing_lifted = stats.lifted;
    out.pacing_lifts = stats.lifts;
  }
  return out;
}

CheckpointResult write_checkpoint(storage::Database& db, const std::string& dir) {
  if (dir.empty() || !fs::path(dir).is_absolute()) {
    return {CheckpointError::kBadTarget, "checkpoint directory must be an absolute path, got '" + dir + "'"};
  }
  fs::path target = fs::path(dir).lexically_normal();
  if (target.has_filename() == false) target = target.parent_path();
  std::error_code ec;
  if (fs::exists(target, ec)) {
    return {CheckpointError::kExists, "checkpoint directory '" + target.string() + "' already exists"};
  }
  if (!fs::is_directory(target.parent_path(), ec)) {
    return {CheckpointError::kBadTarget, "parent directory '" + target.parent_path().string() + "' does not exist"};
  }
  rocksdb::Checkpoint* raw = nullptr;
  rocksdb::Status s = rocksdb::Checkpoint::Create(db.db(), &raw);
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  if (s.ok()) s = checkpoint->CreateCheckpoint(target.string());
  if (!s.ok()) return {CheckpointError::kFailed, "checkpoint failed: " + s.ToString()};
  return {CheckpointError::kNone, target.string()};
}

}  // namespace zstore::server
