#include "storage/db/background_priority.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace zstore::storage {

namespace {

// The process's nice value, read once (the first job's thread inherited it).
int process_nice() {
  static const int nice = [] {
    errno = 0;
    int n = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::getpid()));
    return errno == 0 ? n : 0;
  }();
  return nice;
}

// Once per thread: a thread that has run a job keeps the nice value of its
// first kind of job (RocksDB runs flushes and compactions on pools of their
// own), and raising a priority again would need a privilege.
void lower_this_thread(int increment) {
  thread_local bool done = false;
  if (done) return;
  done = true;
  auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  (void)::setpriority(PRIO_PROCESS, tid, lowered_nice(process_nice(), increment));
}

class BackgroundPriority final : public rocksdb::EventListener {
 public:
  const char* Name() const override { return "ZstoreBackgroundPriority"; }
  void OnFlushBegin(rocksdb::DB*, const rocksdb::FlushJobInfo&) override { lower_this_thread(kFlushNiceIncrement); }
  void OnCompactionBegin(rocksdb::DB*, const rocksdb::CompactionJobInfo&) override {
    lower_this_thread(kCompactionNiceIncrement);
  }
};

}  // namespace

int lowered_nice(int base, int increment) { return std::clamp(base + increment, base, 19); }

std::shared_ptr<rocksdb::EventListener> make_background_priority() { return std::make_shared<BackgroundPriority>(); }

}  // namespace zstore::storage
