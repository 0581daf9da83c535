// Database: the one RocksDB database of a zstore data directory, with a
// column family per kind of data (see Column). Opening checks the layout
// version; writes go through write() with the configured sync policy.
// Thread-safe like rocksdb::DB; the object must outlive every store using it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "storage/status.h"
#include "storage/sync_policy.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
class WriteBatch;
}  // namespace rocksdb

namespace zstore::storage {

// Column families of layout version 1.
enum class Column : std::uint8_t {
  kMeta,          // small metadata: layout version, last CHP sequence, node address
  kChpMap,        // CHP key -> entry (see chp_entry.h)
  kChpExpiry,     // (expiry ms BE, key) -> "" : TTL index
  kDafkaRecords,  // (subject, partition, offset BE) -> record content
  kDafkaHeads,    // (subject, partition) -> head offset
};
inline constexpr std::size_t kColumnCount = 5;
std::string_view column_name(Column column);

inline constexpr std::string_view kLayoutVersion = "1";
inline constexpr std::string_view kMetaLayoutVersion = "layout_version";

struct DatabaseOptions {
  SyncPolicy sync = SyncPolicy::kBatch;
  bool read_only = false;        // open without writing anything; no lock held
  bool create_if_missing = true;  // ignored when read_only
};

class Database {
 public:
  // Opens (or creates) the database in dir. Fails with a clear message for a
  // corrupt database, a directory that is not a zstore database, or an
  // unknown layout version.
  static Status Open(const std::string& dir, const DatabaseOptions& options, std::unique_ptr<Database>* out);

  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Applies batch atomically, honouring the sync policy (kAlways fsyncs).
  Status write(rocksdb::WriteBatch& batch);
  // Forces the write-ahead log to stable storage (kBatch calls it on a timer).
  Status sync_wal();
  // Flushes memtables and closes; further use is an error. Idempotent.
  Status close();

  rocksdb::DB* db() { return db_.get(); }
  rocksdb::ColumnFamilyHandle* handle(Column column) { return handles_[static_cast<std::size_t>(column)]; }
  const DatabaseOptions& options() const { return options_; }
  const std::string& dir() const { return dir_; }

  // Metadata helpers on the kMeta column. get_meta leaves *value empty and
  // returns Ok when the name is absent.
  Status get_meta(std::string_view name, std::string* value);

 private:
  Database() = default;
  Status open_impl(const std::string& dir, const DatabaseOptions& options);
  Status check_layout(bool fresh);

  std::string dir_;
  DatabaseOptions options_;
  std::unique_ptr<rocksdb::DB> db_;
  std::array<rocksdb::ColumnFamilyHandle*, kColumnCount> handles_{};
  rocksdb::ColumnFamilyHandle* default_handle_ = nullptr;
};

}  // namespace zstore::storage
