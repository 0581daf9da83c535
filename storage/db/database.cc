#include "storage/db/database.h"

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/perf_level.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "storage/db/background_pacing.h"
#include "storage/db/database_options.h"
#include "storage/db/info_log.h"
#include "storage/db/memory_budget.h"
#include "storage/db/rocks_status.h"
#include "storage/db/slice.h"

#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_ignore_thread_begin();
extern "C" void __tsan_ignore_thread_end();
#endif

namespace zstore::storage {
namespace {

// ThreadSanitizer builds only: RocksDB's write group lets one writer (the
// leader) copy the other writers' batches into its own and write the WAL
// and memtable for all of them; the hand-off is atomics inside the
// uninstrumented librocksdb, invisible to TSan, so the leader's reads of a
// batch another thread filled look like races (tests/tsan.supp cannot
// match them: RocksDB's frames are missing from TSan's stacks). Accesses
// made inside DB::Write are not checked; everything around it is.
struct IgnoreRocksdbWriteGroup {
#if defined(__SANITIZE_THREAD__)
  IgnoreRocksdbWriteGroup() { __tsan_ignore_thread_begin(); }
  ~IgnoreRocksdbWriteGroup() { __tsan_ignore_thread_end(); }
#endif
};

constexpr std::array<std::string_view, kColumnCount> kColumnNames = {
    "meta", "chp_map", "chp_expiry", "dafka_records", "dafka_heads", "chp_history", "dafka_times", "chp_versions"};
// Added to layout 1 after its first release: created when missing.
bool is_added_column(std::string_view name) {
  return name == "chp_history" || name == "dafka_times" || name == "chp_versions";
}

// Whether dir holds files only RocksDB writes. Without CURRENT they mean a
// damaged database, over which RocksDB would start a new, empty one.
bool has_rocksdb_files(const std::string& dir) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.starts_with("MANIFEST-")) return true;
    auto dot = name.find('.');  // table and log files: <number>.sst, <number>.log
    bool numbered = dot != 0 && dot != std::string::npos && name.find_first_not_of("0123456789") == dot;
    if (numbered && (name.substr(dot) == ".sst" || name.substr(dot) == ".log")) return true;
  }
  return false;
}

constexpr std::string_view kDamagedHint =
    " (the data dir is damaged: restore it from a backup or checkpoint; no new database is started over it)";

// s, a failure that means damage, with what to do about it.
Status with_damaged_hint(const Status& s) { return Status(s.code(), s.message() + std::string(kDamagedHint)); }

// ListColumnFamilies skips what it cannot parse, so a garbage MANIFEST looks
// like a database without our column families. A read-only open (which
// changes nothing) reads it properly and names the damage.
Status check_manifest(const std::string& dir, const DatabaseOptions& options) {
  rocksdb::DB* raw = nullptr;
  rocksdb::DBOptions db = db_options(options, false);
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors{
      {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()}};
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::Status rs = rocksdb::DB::OpenForReadOnly(db, dir, descriptors, &handles, &raw);
  if (!rs.ok()) return with_damaged_hint(from_rocks(rs, "damaged database in '" + dir + "'"));
  for (auto* h : handles) (void)raw->DestroyColumnFamilyHandle(h);
  delete raw;
  return Status::Ok();
}

// A directory without CURRENT: refused when it holds RocksDB files (a
// damaged database) or when no new database may be created in it.
Status check_fresh_dir(const std::string& dir, const DatabaseOptions& options) {
  if (has_rocksdb_files(dir)) {
    return Status::Corruption("damaged database in '" + dir +
                              "': RocksDB files but no CURRENT file; not starting a new database over them");
  }
  if (options.read_only || !options.create_if_missing) {
    return Status::Refused("no zstore database in '" + dir + "' (no RocksDB CURRENT file)");
  }
  return Status::Ok();
}

// An existing database must have every column family of the layout but the
// added ones, which go to *missing (created at this open unless read-only).
Status check_existing_columns(const std::string& dir, const DatabaseOptions& options,
                              std::vector<std::string_view>* missing) {
  std::vector<std::string> existing;
  rocksdb::Status listed = rocksdb::DB::ListColumnFamilies(db_options(options, false), dir, &existing);
  Status s = from_rocks(listed, "cannot read column families of '" + dir + "'");
  if (listed.IsCorruption()) return with_damaged_hint(s);
  if (!s.ok()) return s;
  if (std::find(existing.begin(), existing.end(), "meta") == existing.end()) {
    if (Status m = check_manifest(dir, options); !m.ok()) return m;
    return Status::Refused("'" + dir + "' is a RocksDB database but not a zstore one (no 'meta' column family)");
  }
  for (auto name : kColumnNames) {
    if (std::find(existing.begin(), existing.end(), name) == existing.end()) {
      if (is_added_column(name)) {
        missing->push_back(name);
        continue;
      }
      return Status::Corruption("damaged database in '" + dir + "': no '" + std::string(name) + "' column family");
    }
  }
  return Status::Ok();
}

// The default family, then every column to open (a read-only open skips the
// missing added ones); descriptors[i + 1] is column (*column_of)[i].
std::vector<rocksdb::ColumnFamilyDescriptor> column_descriptors(const DatabaseOptions& options,
                                                                const std::vector<std::string_view>& missing,
                                                                const MemoryBudget& memory,
                                                                std::vector<std::size_t>* column_of) {
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  descriptors.emplace_back(rocksdb::kDefaultColumnFamilyName, column_options("default", memory.block_cache()));
  for (std::size_t c = 0; c < kColumnCount; ++c) {
    auto name = kColumnNames[c];
    if (options.read_only && std::find(missing.begin(), missing.end(), name) != missing.end()) continue;
    descriptors.emplace_back(std::string(name), column_options(name, memory.block_cache()));
    column_of->push_back(c);
  }
  return descriptors;
}

// RocksDB opens without looking at blob files (it checks table files), so
// a missing or cut blob file would only show as failed reads of the Dafka
// records in it. Refused at the open instead, like a missing table file.
Status check_blob_files(rocksdb::DB* db, const std::string& dir,
                        const std::vector<rocksdb::ColumnFamilyHandle*>& handles) {
  for (auto* h : handles) {
    rocksdb::ColumnFamilyMetaData meta;
    db->GetColumnFamilyMetaData(h, &meta);
    for (const auto& blob : meta.blob_files) {
      std::filesystem::path path = blob.blob_file_path + blob.blob_file_name;  // the name starts with '/'
      std::error_code ec;
      auto size = std::filesystem::file_size(path, ec);
      std::string problem;
      if (ec) {
        problem = "cannot read " + path.string() + ": " + ec.message();
      } else if (size < blob.blob_file_size) {  // cut short (preallocation never shows in the size)
        problem = path.string() + " has " + std::to_string(size) + " bytes, the database recorded " +
                  std::to_string(blob.blob_file_size);
      }
      if (!problem.empty()) {
        return Status::Corruption("damaged database in '" + dir + "': blob file of '" + meta.name + "': " + problem +
                                  std::string(kDamagedHint));
      }
    }
  }
  return Status::Ok();
}

}  // namespace

std::string_view column_name(Column column) { return kColumnNames[static_cast<std::size_t>(column)]; }

Status Database::Open(const std::string& dir, const DatabaseOptions& options, std::unique_ptr<Database>* out) {
  std::unique_ptr<Database> db(new Database());
  Status s = db->open_impl(dir, options);
  if (!s.ok()) return s;
  *out = std::move(db);
  return Status::Ok();
}

Status Database::open_impl(const std::string& dir, const DatabaseOptions& options) {
  dir_ = dir;
  options_ = options;
  std::vector<std::string_view> missing;  // added columns the database lacks
  std::error_code ec;
  bool fresh = !std::filesystem::exists(std::filesystem::path(dir) / "CURRENT", ec);
  Status checked = fresh ? check_fresh_dir(dir, options) : check_existing_columns(dir, options, &missing);
  if (!checked.ok()) return checked;
  if (!fresh || !options.read_only) {
    std::filesystem::create_directories(dir, ec);
  }
  rocksdb::DBOptions db = db_options(options, fresh);
  if (!missing.empty() && !options.read_only) db.create_missing_column_families = true;
  if (!options.read_only) db.info_log = make_info_log(dir, db.keep_log_file_num);
  memory_ = std::make_unique<MemoryBudget>(options.memtable_budget_bytes, options.block_cache_bytes);
  db.write_buffer_manager = memory_->write_buffers();

  std::vector<std::size_t> column_of;
  auto descriptors = column_descriptors(options, missing, *memory_, &column_of);
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status rs = options.read_only ? rocksdb::DB::OpenForReadOnly(db, dir, descriptors, &handles, &raw)
                                         : rocksdb::DB::Open(db, dir, descriptors, &handles, &raw);
  if (!rs.ok()) {
    Status s = from_rocks(rs, "cannot open database in '" + dir + "'");
    if (rs.IsCorruption()) return with_damaged_hint(s);
    return s;
  }
  db_.reset(raw);
  pacing_ = pacing_in(db);
  paces_background_ = pacing_ && db.rate_limiter == pacing_->limiter();
  default_handle_ = handles[0];
  for (std::size_t i = 0; i + 1 < handles.size(); ++i) handles_[column_of[i]] = handles[i + 1];
  if (Status blobs = check_blob_files(raw, dir, handles); !blobs.ok()) {
    abandon();
    return blobs;
  }
  return check_layout(fresh);
}

Status Database::check_layout(bool fresh) {
  std::string version;
  Status s = get_meta(kMetaLayoutVersion, &version);
  if (!s.ok()) return s;
  if (version.empty() && !fresh) {
    return Status::Refused("'" + dir_ + "' has no zstore layout version: not a zstore database");
  }
  bool older = version == kLayoutVersionBeforeRuns || version == kLayoutVersionBeforeHistoryReferences ||
               version == kLayoutVersionBeforeCompactHistory;
  if (version != kLayoutVersion && !older && !version.empty()) {
    return Status::Refused("'" + dir_ + "' has layout version " + version + "; this zstore reads versions " +
                           std::string(kLayoutVersionBeforeRuns) + " to " + std::string(kLayoutVersion));
  }
  if (options_.read_only) return Status::Ok();
  rocksdb::WriteBatch batch;
  if (version.empty() || older) {
    batch.Put(handle(Column::kMeta), std::string(kMetaLayoutVersion), std::string(kLayoutVersion));
  }
  return mark_open(fresh, batch);
}

// Reads how the last open ended and records, durably (with the layout
// version of a new database), that this one has not ended yet.
Status Database::mark_open(bool fresh, rocksdb::WriteBatch& batch) {
  std::string clean;
  Status s = get_meta(kMetaCleanStop, &clean);
  if (!s.ok()) return s;
  stopped_cleanly_ = fresh || clean == "1";
  batch.Put(handle(Column::kMeta), std::string(kMetaCleanStop), "0");
  return write_durable(batch);
}

Database::~Database() { (void)close(); }

Status Database::write(rocksdb::WriteBatch& batch) { return write(batch, WriteKind::kGrows); }

Status Database::write(rocksdb::WriteBatch& batch, WriteKind kind) {
  return write_with(batch, kind, options_.sync == SyncPolicy::kAlways);
}

Status Database::write(rocksdb::WriteBatch& batch, WriteSync sync) {
  if (sync == WriteSync::kByPolicy) return write(batch);
  return write_with(batch, WriteKind::kGrows, false);
}

Status Database::write_durable(rocksdb::WriteBatch& batch) { return write_with(batch, WriteKind::kGrows, true); }

Status Database::write_with(rocksdb::WriteBatch& batch, WriteKind kind, bool sync) {
  if (!db_) return Status::Refused("database is closed");
  if (options_.read_only) return Status::Refused("database is open read-only");
  if (kind == WriteKind::kGrows && refused_.load(std::memory_order_acquire)) {
    std::lock_guard lock(refusal_mutex_);
    return Status::Refused(refusal_);
  }
  Status s = recover_if_failing();
  if (!s.ok()) return s;
  // RocksDB's per-thread perf counters (on by default) cost ~15% of a small
  // write (docs/benchmarks.md) and nothing reads them: off for this thread.
  rocksdb::SetPerfLevel(rocksdb::kDisable);
  rocksdb::WriteOptions wo;
  wo.sync = sync;
  memory_->flush_ahead(db_.get(), handle(Column::kChpMap), batch.GetDataSize());
  {
    [[maybe_unused]] IgnoreRocksdbWriteGroup tsan;
    s = from_rocks(db_->Write(wo, &batch), "write failed");
  }
  note_write(s);
  if (s.ok() && !sync && options_.sync == SyncPolicy::kBatch) unsynced_.store(true, std::memory_order_release);
  return s;
}

void Database::refuse_writes(std::string reason) {
  std::lock_guard lock(refusal_mutex_);
  refusal_ = std::move(reason);
  refused_.store(true, std::memory_order_release);
}

void Database::accept_writes() { refused_.store(false, std::memory_order_release); }

Status Database::sync_wal() {
  if (!db_ || options_.read_only) return Status::Ok();
  // A log that failed a write must not be synced before recovery (RocksDB
  // asserts against it); its state is reported by write().
  if (Status failure = write_failure(); !failure.ok()) {
    unsynced_.store(true, std::memory_order_release);
    return Status(failure.code(), "WAL not synced: writes are failing");
  }
  rocksdb::Status rs;
  {
    std::lock_guard lock(sync_mutex_);
    rs = db_->SyncWAL();
  }
  if (rs.ok()) return Status::Ok();
  Status s = from_rocks(rs, "WAL sync failed");
  note_write(s);  // a failed sync stops writes until recovery, as a failed write
  unsynced_.store(true, std::memory_order_release);
  return s;
}

bool Database::write_failing() const { return recovery_.failing(); }

Status Database::write_failure() const { return recovery_.failure(); }

bool Database::write_unrecoverable() const { return recovery_.unrecoverable(); }

std::string Database::last_write_error() const { return recovery_.last_error(); }

void Database::note_write(const Status& s) { recovery_.note(s); }

Status Database::recover_if_failing() { return recovery_.recover(db_.get(), &sync_mutex_, options_.resume_interval); }

Status Database::get_meta(std::string_view name, std::string* value) {
  value->clear();
  if (!db_) return Status::Refused("database is closed");
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), handle(Column::kMeta), slice(name), value);
  if (s.IsNotFound()) return Status::Ok();
  return from_rocks(s, "metadata read failed");
}

void Database::abandon() {
  options_.read_only = true;  // so close() neither syncs nor flushes
  (void)close();
}

Status Database::close() {
  if (!db_) return Status::Ok();
  Status result = Status::Ok();
  if (!options_.read_only && !write_failing()) {
    rocksdb::WriteBatch clean;
    clean.Put(handle(Column::kMeta), std::string(kMetaCleanStop), "1");
    // Fsynced with it: everything written before.
    result = write_with(clean, WriteKind::kReclaims, true);
    // Memtables to tables, so the next open replays (almost) no log.
    std::vector<rocksdb::ColumnFamilyHandle*> all(handles_.begin(), handles_.end());
    rocksdb::Status s = db_->Flush(rocksdb::FlushOptions(), all);
    if (!s.ok() && result.ok()) result = from_rocks(s, "flush at close failed");
  }
  for (auto*& h : handles_) {
    if (h != nullptr) (void)db_->DestroyColumnFamilyHandle(h);
    h = nullptr;
  }
  if (default_handle_ != nullptr) (void)db_->DestroyColumnFamilyHandle(default_handle_);
  default_handle_ = nullptr;
  rocksdb::Status s = db_->Close();
  if (!s.ok() && result.ok()) result = from_rocks(s, "close failed");
  db_.reset();
  return result;
}

}  // namespace zstore::storage
