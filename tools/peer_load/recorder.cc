#include <chrono>

#include "tools/peer_load/peer_load.h"

namespace zstore::peer_load {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void Recorder::ack(std::int64_t sent_ns) {
  ++acked_;
  std::int64_t t = now_ns();
  if (t < phases_.start_ns || t > phases_.end_ns) return;
  ++window_acked_;
  if (latencies_us_.size() < kMaxSamples) latencies_us_.push_back(static_cast<std::uint32_t>((t - sent_ns) / 1000));
}

std::string make_value(const Spec& spec) { return std::string(spec.value_bytes, 'v'); }

}  // namespace zstore::peer_load
