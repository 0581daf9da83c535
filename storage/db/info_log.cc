#include "storage/db/info_log.h"

#include <rocksdb/env.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <thread>
#include <vector>

namespace zstore::storage {
namespace {

namespace fs = std::filesystem;

class StdioLogger final : public rocksdb::Logger {
 public:
  explicit StdioLogger(std::FILE* file) : rocksdb::Logger(rocksdb::InfoLogLevel::INFO_LEVEL), file_(file) {}
  ~StdioLogger() override { (void)CloseImpl(); }

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    char line[1024];
    auto now = std::chrono::system_clock::now();
    std::time_t secs = std::chrono::system_clock::to_time_t(now);
    auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
    std::tm tm{};
    gmtime_r(&secs, &tm);
    int n = std::snprintf(line, sizeof line, "%04d/%02d/%02d-%02d:%02d:%02d.%06lld ", tm.tm_year + 1900, tm.tm_mon + 1,
                          tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(micros));
    va_list copy;
    va_copy(copy, ap);
    int m = std::vsnprintf(line + n, sizeof line - static_cast<std::size_t>(n), format, copy);
    va_end(copy);
    std::size_t len = std::min(sizeof line - 1, static_cast<std::size_t>(n + std::max(m, 0)));
    // Errors (a full disk) are ignored: losing diagnostics must not stop us.
    (void)std::fwrite(line, 1, len, file_);
    (void)std::fputc('\n', file_);
    (void)std::fflush(file_);
  }

  void Flush() override { (void)std::fflush(file_); }

 protected:
  rocksdb::Status CloseImpl() override {
    if (file_ != nullptr) (void)std::fclose(file_);
    file_ = nullptr;
    return rocksdb::Status::OK();
  }

 private:
  std::FILE* file_;
};

void rotate(const fs::path& dir, std::size_t keep_old) {
  std::error_code ec;
  fs::path log = dir / "LOG";
  if (fs::exists(log, ec)) {
    auto micros =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    fs::rename(log, dir / ("LOG.old." + std::to_string(micros)), ec);
  }
  std::vector<fs::path> old;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename().string().starts_with("LOG.old.")) old.push_back(it->path());
  }
  std::sort(old.begin(), old.end());  // same-width timestamps: oldest first
  for (std::size_t i = 0; i + keep_old < old.size(); ++i) fs::remove(old[i], ec);
}

}  // namespace

std::shared_ptr<rocksdb::Logger> make_info_log(const std::string& dir, std::size_t keep_old) {
  rotate(dir, keep_old);
  std::FILE* file = std::fopen((fs::path(dir) / "LOG").c_str(), "a");
  if (file == nullptr) return nullptr;
  return std::make_shared<StdioLogger>(file);
}

}  // namespace zstore::storage
