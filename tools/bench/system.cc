#include "tools/bench/system.h"

#include <sched.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace zstore::bench {

void pin_current_thread(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    throw std::runtime_error("cannot pin to CPU " + std::to_string(cpu) + ": " + std::strerror(errno));
  }
}

std::optional<double> cpu_seconds(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return std::nullopt;
  // Fields after the command name (which may hold spaces) start at ") ".
  auto close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  unsigned long long utime = 0;
  unsigned long long stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {  // field 3 is the state
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  if (!fields) return std::nullopt;
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

std::optional<MemoryUse> memory_use(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  if (!status) return std::nullopt;
  MemoryUse use;
  bool hwm = false;
  bool rss = false;
  std::string name;
  while (status >> name) {
    if (name == "VmHWM:") hwm = static_cast<bool>(status >> use.hwm_kib);
    if (name == "VmRSS:") rss = static_cast<bool>(status >> use.rss_kib);
    status.ignore(1 << 16, '\n');
  }
  if (!hwm || !rss) return std::nullopt;
  return use;
}

}  // namespace zstore::bench
