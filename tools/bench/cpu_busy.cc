#include "tools/bench/cpu_busy.h"

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include "tools/bench/latency.h"

namespace zstore::bench {
namespace {

// The "cpuN" line of /proc/stat: user nice system idle iowait irq softirq steal ...
bool read_ticks(int cpu, std::uint64_t* busy, std::uint64_t* total) {
  std::ifstream stat("/proc/stat");
  std::string name = "cpu" + std::to_string(cpu);
  std::string line;
  while (std::getline(stat, line)) {
    std::istringstream fields(line);
    std::string first;
    fields >> first;
    if (first != name) continue;
    std::uint64_t v[8] = {};
    for (auto& x : v) {
      if (!(fields >> x)) return false;
    }
    *busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    *total = *busy + v[3] + v[4];
    return true;
  }
  return false;
}

}  // namespace

CpuBusySampler::CpuBusySampler(int cpu) : cpu_(cpu) {
  if (cpu_ >= 0) thread_ = std::thread([this] { run(); });
}

CpuBusySampler::~CpuBusySampler() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void CpuBusySampler::run() {
  while (!stop_.load()) {
    Sample s;
    s.at_ns = now_ns();
    if (read_ticks(cpu_, &s.busy, &s.total)) {
      std::lock_guard<std::mutex> lock(mutex_);
      samples_.push_back(s);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::optional<double> CpuBusySampler::busy(std::int64_t from_ns, std::int64_t to_ns) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const Sample* first = nullptr;
  const Sample* last = nullptr;
  for (const Sample& s : samples_) {
    if (s.at_ns < from_ns || s.at_ns > to_ns) continue;
    if (first == nullptr) first = &s;
    last = &s;
  }
  if (first == nullptr || last->total < first->total + kMinTicks) return std::nullopt;
  return static_cast<double>(last->busy - first->busy) / static_cast<double>(last->total - first->total);
}

}  // namespace zstore::bench
