#include "server/zstored/malloc_tuning.h"

#include <malloc.h>

namespace zstore::server {

// glibc mmaps blocks above a threshold (128 KiB at start) and raises the
// threshold to the size of each mmapped block freed, up to 32 MiB: after
// the first 16 MiB CHP value is freed, the next ones (the received message,
// the write batch, the memtable's copy) come from the heaps of the threads
// that allocate them, and stay there once freed. After 48 x 16 MiB values
// zstored kept 235 MiB of RSS with a 64 MiB memtable budget (tests/ops/
// memory_budget_test.cpp); with a fixed threshold it gives them back when
// the memtables holding them are flushed. Setting it also stops glibc's
// adjustment of M_TRIM_THRESHOLD (128 KiB), so heap tops are trimmed too.
bool tune_malloc_for_large_values() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;  // the sanitizer's allocator replaces glibc's: nothing to tune
#else
  return mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapThresholdBytes)) == 1;
#endif
}

}  // namespace zstore::server
