// Operating-system helpers of zstore-bench: CPU pinning and the memory and
// CPU use of a process. (Free ports come from tools/harness.)
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>

namespace zstore::bench {

// Pins the calling thread (and the threads it creates later) to one CPU.
// cpu < 0 does nothing. Throws std::runtime_error when the CPU is not usable.
void pin_current_thread(int cpu);

// VmHWM (peak) and VmRSS (current) of a process in KiB, from
// /proc/PID/status; nullopt when the process or the fields are gone.
struct MemoryUse {
  std::uint64_t hwm_kib = 0;
  std::uint64_t rss_kib = 0;
};
std::optional<MemoryUse> memory_use(pid_t pid);

// CPU time (user + system, all threads) a process used so far, in seconds,
// from /proc/PID/stat; nullopt when the process is gone.
std::optional<double> cpu_seconds(pid_t pid);

}  // namespace zstore::bench
