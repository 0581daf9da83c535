#include "server/jobs/heap_trimmer.h"

#include <malloc.h>

namespace zstore::server {

void HeapTrimmer::start() {
  thread_.start([this] {
    trim();
    passes_.fetch_add(1, std::memory_order_relaxed);
  });
}

// malloc_trim walks each arena's free chunks under that arena's lock (a
// thread allocating from it meanwhile waits): about a millisecond for a
// heap of hundreds of MiB, so every few seconds is cheap.
bool HeapTrimmer::trim() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return false;
#else
  return malloc_trim(0) == 1;
#endif
}

}  // namespace zstore::server
