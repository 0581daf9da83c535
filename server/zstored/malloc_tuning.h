// glibc malloc settings of zstored, applied once at start before any thread
// runs. Not for library code: a process-wide choice.
#pragma once

#include <cstddef>

namespace zstore::server {

// Blocks of this size and more are mmapped, so each goes back to the system
// when freed.
inline constexpr std::size_t kMmapThresholdBytes = std::size_t{1} << 20;

// Sets M_MMAP_THRESHOLD to kMmapThresholdBytes (see the .cc for why);
// false if glibc refused it (zstored goes on with its defaults). Nothing
// under ASan or TSan, whose allocators replace glibc's.
bool tune_malloc_for_large_values();

}  // namespace zstore::server
