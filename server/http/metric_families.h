// The shapes of zstored's metric families (metrics_text.h): a counter or a
// gauge of one sample, a counter by decode-error kind, and the relaxed read
// of an atomic counter they print. Internal to server/http.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "protocol/decode_result.h"
#include "server/http/metrics_text.h"
#include "server/reactor/loop_metrics.h"

namespace zstore::server {

inline std::uint64_t get(const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); }

inline void counter(PromWriter& w, std::string_view name, std::string_view help, std::uint64_t value) {
  w.family(name, "counter", help);
  w.sample(value);
}

inline void gauge(PromWriter& w, std::string_view name, std::string_view help, std::uint64_t value) {
  w.family(name, "gauge", help);
  w.sample(value);
}

template <typename Metrics>
void malformed(PromWriter& w, std::string_view name, std::string_view help, const Metrics& m) {
  w.family(name, "counter", help);
  for (std::size_t i = 0; i < kDecodeErrorKinds; ++i) {
    w.sample(get(m.malformed.by_kind[i]), {{"kind", protocol::to_string(static_cast<protocol::DecodeErrorKind>(i))}});
  }
}

}  // namespace zstore::server
