#include "storage/faults/fault_env.h"

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <string>
#include <utility>

namespace zstore::storage {

void WriteFaults::arm(FaultFiles files, FaultOps ops, FaultError error) {
  ops_.store(ops);
  error_.store(error);
  files_.store(static_cast<unsigned>(files));
}

bool WriteFaults::should_fail(std::string_view file, bool is_sync) {
  unsigned armed = files_.load();
  if ((armed & fault_file_kind(file)) == 0) return false;
  if (ops_.load() == FaultOps::kSyncs && !is_sync) return false;
  injected_.fetch_add(1);
  return true;
}

unsigned fault_file_kind(std::string_view file) {
  auto slash = file.rfind('/');
  std::string_view name = slash == std::string_view::npos ? file : file.substr(slash + 1);
  if (name.starts_with("MANIFEST-") || name.starts_with("CURRENT")) return static_cast<unsigned>(FaultFiles::kManifest);
  auto dot = name.find('.');
  if (dot == 0 || dot == std::string_view::npos || name.find_first_not_of("0123456789") != dot) return 0;
  if (name.substr(dot) == ".log") return static_cast<unsigned>(FaultFiles::kWal);
  if (name.substr(dot) == ".sst") return static_cast<unsigned>(FaultFiles::kTable);
  return 0;
}

namespace {

using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;
using rocksdb::Slice;

IOStatus injected(const WriteFaults& faults, const std::string& file) {
  // As RocksDB's posix file system reports ENOSPC and EIO: not retryable.
  if (faults.error() == FaultError::kNoSpace) return IOStatus::NoSpace("injected fault", file);
  return IOStatus::IOError("injected fault", file);
}

class FaultFile final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  FaultFile(std::unique_ptr<rocksdb::FSWritableFile> file, std::string name, std::shared_ptr<WriteFaults> faults)
      : FSWritableFileOwnerWrapper(std::move(file)), name_(std::move(name)), faults_(std::move(faults)) {}

  IOStatus Append(const Slice& data, const IOOptions& o, IODebugContext* dbg) override {
    if (faults_->should_fail(name_, false)) return injected(*faults_, name_);
    return FSWritableFileOwnerWrapper::Append(data, o, dbg);
  }
  IOStatus Append(const Slice& data, const IOOptions& o, const rocksdb::DataVerificationInfo& v,
                  IODebugContext* dbg) override {
    if (faults_->should_fail(name_, false)) return injected(*faults_, name_);
    return FSWritableFileOwnerWrapper::Append(data, o, v, dbg);
  }
  IOStatus PositionedAppend(const Slice& data, uint64_t offset, const IOOptions& o, IODebugContext* dbg) override {
    if (faults_->should_fail(name_, false)) return injected(*faults_, name_);
    return FSWritableFileOwnerWrapper::PositionedAppend(data, offset, o, dbg);
  }
  IOStatus PositionedAppend(const Slice& data, uint64_t offset, const IOOptions& o,
                            const rocksdb::DataVerificationInfo& v, IODebugContext* dbg) override {
    if (faults_->should_fail(name_, false)) return injected(*faults_, name_);
    return FSWritableFileOwnerWrapper::PositionedAppend(data, offset, o, v, dbg);
  }
  IOStatus Sync(const IOOptions& o, IODebugContext* dbg) override {
    if (faults_->should_fail(name_, true)) return injected(*faults_, name_);
    return FSWritableFileOwnerWrapper::Sync(o, dbg);
  }
  IOStatus Fsync(const IOOptions& o, IODebugContext* dbg) override {
    if (faults_->should_fail(name_, true)) return injected(*faults_, name_);
    return FSWritableFileOwnerWrapper::Fsync(o, dbg);
  }
  IOStatus RangeSync(uint64_t offset, uint64_t nbytes, const IOOptions& o, IODebugContext* dbg) override {
    if (faults_->should_fail(name_, true)) return injected(*faults_, name_);
    return FSWritableFileOwnerWrapper::RangeSync(offset, nbytes, o, dbg);
  }

 private:
  std::string name_;
  std::shared_ptr<WriteFaults> faults_;
};

class FaultFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  FaultFileSystem(const std::shared_ptr<rocksdb::FileSystem>& target, std::shared_ptr<WriteFaults> faults)
      : FileSystemWrapper(target), faults_(std::move(faults)) {}

  const char* Name() const override { return "ZstoreFaultFileSystem"; }

  IOStatus NewWritableFile(const std::string& f, const rocksdb::FileOptions& fo,
                           std::unique_ptr<rocksdb::FSWritableFile>* r, IODebugContext* dbg) override {
    if (fails_creation(f)) return injected(*faults_, f);
    return wrap(f, FileSystemWrapper::NewWritableFile(f, fo, r, dbg), r);
  }
  IOStatus ReopenWritableFile(const std::string& f, const rocksdb::FileOptions& fo,
                              std::unique_ptr<rocksdb::FSWritableFile>* r, IODebugContext* dbg) override {
    if (fails_creation(f)) return injected(*faults_, f);
    return wrap(f, FileSystemWrapper::ReopenWritableFile(f, fo, r, dbg), r);
  }
  IOStatus ReuseWritableFile(const std::string& f, const std::string& old, const rocksdb::FileOptions& fo,
                             std::unique_ptr<rocksdb::FSWritableFile>* r, IODebugContext* dbg) override {
    if (fails_creation(f)) return injected(*faults_, f);
    return wrap(f, FileSystemWrapper::ReuseWritableFile(f, old, fo, r, dbg), r);
  }

 private:
  // A full disk still creates files (it has inodes): only appends fail.
  bool fails_creation(const std::string& f) {
    return faults_->error() != FaultError::kNoSpace && faults_->should_fail(f, false);
  }

  IOStatus wrap(const std::string& f, IOStatus s, std::unique_ptr<rocksdb::FSWritableFile>* r) {
    if (s.ok()) *r = std::make_unique<FaultFile>(std::move(*r), f, faults_);
    return s;
  }

  std::shared_ptr<WriteFaults> faults_;
};

}  // namespace

std::shared_ptr<rocksdb::Env> make_fault_env(std::shared_ptr<WriteFaults> faults) {
  auto fs = std::make_shared<FaultFileSystem>(rocksdb::FileSystem::Default(), std::move(faults));
  return std::shared_ptr<rocksdb::Env>(rocksdb::NewCompositeEnv(fs));
}

}  // namespace zstore::storage
