#include "storage/faults/power_cut_fs.h"

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>

namespace zstore::storage {
namespace {

using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;

IOStatus power_off() { return IOStatus::IOError("the power is off (PowerCut::cut)"); }

// What a file holds on the disk: `written` bytes reached the file, the
// first `synced` of them are durable. Bytes not yet written stay with the
// open file object (LazyFile::pending_).
struct FileState {
  std::uint64_t written = 0;
  std::uint64_t synced = 0;
  std::uint64_t pending = 0;  // appended by an open file, not yet written
};

// The state shared by the file system and its files.
struct Power {
  std::mutex mu;
  std::map<std::string, FileState> files;  // by path; guarded by mu
  std::atomic<bool> off{false};
  std::atomic<std::uint64_t> dropped{0};
  std::atomic<std::uint64_t> synced{0};
};

class LazyFile final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  LazyFile(std::unique_ptr<rocksdb::FSWritableFile> target, std::shared_ptr<Power> power, std::string path)
      : FSWritableFileOwnerWrapper(std::move(target)), power_(std::move(power)), path_(std::move(path)) {}

  IOStatus Append(const rocksdb::Slice& data, const IOOptions&, IODebugContext*) override {
    if (power_->off) return power_off();
    std::lock_guard<std::mutex> lock(mu_);
    pending_.append(data.data(), data.size());
    std::lock_guard<std::mutex> files(power_->mu);
    power_->files[path_].pending = pending_.size();
    return IOStatus::OK();
  }
  IOStatus Append(const rocksdb::Slice& data, const IOOptions& options, const rocksdb::DataVerificationInfo&,
                  IODebugContext* dbg) override {
    return Append(data, options, dbg);
  }
  IOStatus PositionedAppend(const rocksdb::Slice&, std::uint64_t, const IOOptions&, IODebugContext*) override {
    return IOStatus::NotSupported("PowerCut files take appends only");
  }
  IOStatus PositionedAppend(const rocksdb::Slice&, std::uint64_t, const IOOptions&,
                            const rocksdb::DataVerificationInfo&, IODebugContext*) override {
    return IOStatus::NotSupported("PowerCut files take appends only");
  }
  IOStatus Flush(const IOOptions&, IODebugContext*) override {
    return power_->off ? power_off() : IOStatus::OK();  // the page cache keeps it: nothing to do
  }
  IOStatus RangeSync(std::uint64_t, std::uint64_t, const IOOptions&, IODebugContext*) override {
    return power_->off ? power_off() : IOStatus::OK();  // starts write-back, makes nothing durable
  }
  IOStatus Sync(const IOOptions& options, IODebugContext* dbg) override { return sync(options, dbg, false); }
  IOStatus Fsync(const IOOptions& options, IODebugContext* dbg) override { return sync(options, dbg, true); }
  bool IsSyncThreadSafe() const override { return true; }

  IOStatus Truncate(std::uint64_t size, const IOOptions& options, IODebugContext* dbg) override {
    if (power_->off) return power_off();
    std::lock_guard<std::mutex> lock(mu_);
    std::lock_guard<std::mutex> files(power_->mu);
    FileState& f = power_->files[path_];
    if (size >= f.written) {
      pending_.resize(size - f.written);
      f.pending = pending_.size();
      return IOStatus::OK();
    }
    pending_.clear();
    f.pending = 0;
    IOStatus s = target()->Truncate(size, options, dbg);
    if (s.ok()) f.written = size;
    if (f.synced > size) f.synced = size;
    return s;
  }

  std::uint64_t GetFileSize(const IOOptions&, IODebugContext*) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::lock_guard<std::mutex> files(power_->mu);
    return power_->files[path_].written + pending_.size();
  }

  // Unsynced bytes reach the file (the page cache), not the disk.
  IOStatus Close(const IOOptions& options, IODebugContext* dbg) override {
    if (power_->off) return power_off();
    std::lock_guard<std::mutex> lock(mu_);
    IOStatus s = write_pending(options, dbg);
    if (s.ok()) s = target()->Close(options, dbg);
    return s;
  }

 private:
  // Called with mu_ held.
  IOStatus write_pending(const IOOptions& options, IODebugContext* dbg) {
    if (pending_.empty()) return IOStatus::OK();
    IOStatus s = target()->Append(pending_, options, dbg);
    if (s.ok()) s = target()->Flush(options, dbg);
    if (!s.ok()) return s;
    std::lock_guard<std::mutex> files(power_->mu);
    FileState& f = power_->files[path_];
    f.written += pending_.size();
    f.pending = 0;
    pending_.clear();
    return s;
  }

  IOStatus sync(const IOOptions& options, IODebugContext* dbg, bool full) {
    if (power_->off) return power_off();
    std::lock_guard<std::mutex> lock(mu_);
    IOStatus s = write_pending(options, dbg);
    if (s.ok()) s = full ? target()->Fsync(options, dbg) : target()->Sync(options, dbg);
    if (!s.ok()) return s;
    std::lock_guard<std::mutex> files(power_->mu);
    FileState& f = power_->files[path_];
    power_->synced += f.written - f.synced;
    f.synced = f.written;
    return s;
  }

  std::shared_ptr<Power> power_;
  std::string path_;
  std::mutex mu_;
  std::string pending_;  // appended, not yet in the file; guarded by mu_
};

class PowerCutFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  PowerCutFileSystem(const std::shared_ptr<rocksdb::FileSystem>& target, std::shared_ptr<Power> power)
      : FileSystemWrapper(target), power_(std::move(power)) {}

  const char* Name() const override { return "ZstorePowerCutFileSystem"; }

  IOStatus NewWritableFile(const std::string& path, const rocksdb::FileOptions& options,
                           std::unique_ptr<rocksdb::FSWritableFile>* out, IODebugContext* dbg) override {
    if (power_->off) return power_off();
    std::unique_ptr<rocksdb::FSWritableFile> file;
    IOStatus s = target()->NewWritableFile(path, options, &file, dbg);
    if (!s.ok()) return s;
    {
      std::lock_guard<std::mutex> lock(power_->mu);
      power_->files[path] = FileState{};  // a new, empty file (its old bytes, if any, are gone)
    }
    *out = std::make_unique<LazyFile>(std::move(file), power_, path);
    return s;
  }

  IOStatus ReopenWritableFile(const std::string& path, const rocksdb::FileOptions& options,
                              std::unique_ptr<rocksdb::FSWritableFile>* out, IODebugContext* dbg) override {
    if (power_->off) return power_off();
    std::unique_ptr<rocksdb::FSWritableFile> file;
    IOStatus s = target()->ReopenWritableFile(path, options, &file, dbg);
    if (!s.ok()) return s;
    std::error_code ec;
    std::uint64_t size = std::filesystem::file_size(path, ec);
    {
      std::lock_guard<std::mutex> lock(power_->mu);
      auto [it, added] = power_->files.try_emplace(path, FileState{size, size});  // found on the disk: durable
      if (!added) it->second.written = size;
    }
    *out = std::make_unique<LazyFile>(std::move(file), power_, path);
    return s;
  }

  IOStatus ReuseWritableFile(const std::string& path, const std::string& old_path, const rocksdb::FileOptions& options,
                             std::unique_ptr<rocksdb::FSWritableFile>* out, IODebugContext* dbg) override {
    IOStatus s = RenameFile(old_path, path, IOOptions(), dbg);
    if (!s.ok()) return s;
    return NewWritableFile(path, options, out, dbg);
  }

  IOStatus NewRandomRWFile(const std::string&, const rocksdb::FileOptions&, std::unique_ptr<rocksdb::FSRandomRWFile>*,
                           IODebugContext*) override {
    return IOStatus::NotSupported("PowerCut files take appends only");
  }

  IOStatus DeleteFile(const std::string& path, const IOOptions& options, IODebugContext* dbg) override {
    if (power_->off) return power_off();
    IOStatus s = target()->DeleteFile(path, options, dbg);
    if (s.ok()) {
      std::lock_guard<std::mutex> lock(power_->mu);
      power_->files.erase(path);
    }
    return s;
  }

  IOStatus RenameFile(const std::string& from, const std::string& to, const IOOptions& options,
                      IODebugContext* dbg) override {
    if (power_->off) return power_off();
    IOStatus s = target()->RenameFile(from, to, options, dbg);
    if (!s.ok()) return s;
    std::lock_guard<std::mutex> lock(power_->mu);
    power_->files.erase(to);
    if (auto it = power_->files.find(from); it != power_->files.end()) {
      power_->files[to] = it->second;
      power_->files.erase(from);
    }
    return s;
  }

  IOStatus LinkFile(const std::string& from, const std::string& to, const IOOptions& options,
                    IODebugContext* dbg) override {
    if (power_->off) return power_off();
    return target()->LinkFile(from, to, options, dbg);
  }

  IOStatus CreateDir(const std::string& path, const IOOptions& options, IODebugContext* dbg) override {
    if (power_->off) return power_off();
    return target()->CreateDir(path, options, dbg);
  }

  IOStatus CreateDirIfMissing(const std::string& path, const IOOptions& options, IODebugContext* dbg) override {
    if (power_->off) return power_off();
    return target()->CreateDirIfMissing(path, options, dbg);
  }

  IOStatus Truncate(const std::string& path, size_t size, const IOOptions& options, IODebugContext* dbg) override {
    if (power_->off) return power_off();
    IOStatus s = target()->Truncate(path, size, options, dbg);
    if (s.ok()) {
      std::lock_guard<std::mutex> lock(power_->mu);
      if (auto it = power_->files.find(path); it != power_->files.end()) {
        it->second.written = std::min<std::uint64_t>(it->second.written, size);
        it->second.synced = std::min<std::uint64_t>(it->second.synced, size);
      }
    }
    return s;
  }

 private:
  std::shared_ptr<Power> power_;
};

class PowerCutImpl final : public PowerCut {
 public:
  PowerCutImpl() : power_(std::make_shared<Power>()) {
    auto fs = std::make_shared<PowerCutFileSystem>(rocksdb::FileSystem::Default(), power_);
    env_ = std::shared_ptr<rocksdb::Env>(rocksdb::NewCompositeEnv(fs).release());
  }

  std::shared_ptr<rocksdb::Env> env() override { return env_; }

  void cut() override {
    if (power_->off.exchange(true)) return;
    std::lock_guard<std::mutex> lock(power_->mu);
    for (auto& [path, f] : power_->files) {
      power_->dropped += f.pending;  // never leaves the open file object now
      std::error_code ec;
      std::uint64_t size = std::filesystem::file_size(path, ec);
      if (ec || size <= f.synced) continue;
      std::filesystem::resize_file(path, f.synced, ec);
      if (!ec) power_->dropped += size - f.synced;
    }
  }

  std::uint64_t dropped_bytes() const override { return power_->dropped; }
  std::uint64_t synced_bytes() const override { return power_->synced; }

 private:
  std::shared_ptr<Power> power_;
  std::shared_ptr<rocksdb::Env> env_;
};

}  // namespace

std::unique_ptr<PowerCut> make_power_cut() { return std::make_unique<PowerCutImpl>(); }

}  // namespace zstore::storage
