// zstored's HTTP endpoints seen by the benchmarks: the timing of a /metrics
// scrape (one GET over loopback, as Prometheus does it; the snapshot mode
// after loading its keys) and the age of the CHP loop's last turn from
// /healthz (the resync mode's measure of the longest turn).
#pragma once

#include <cstdint>
#include <string>

namespace zstore::bench {

struct ScrapeTiming {
  double ms = 0;         // request sent to the whole reply read
  double chp_keys = -1;  // zstore_chp_keys in the reply (-1: absent)
};

// GETs http://host:port/metrics; throws std::runtime_error when the server
// cannot be reached or does not answer 200 within 30 s.
ScrapeTiming time_metrics_scrape(const std::string& host, std::uint16_t port);

// The whole reply (status line, headers, body) to GET path; throws
// std::runtime_error when the server cannot be reached or is silent 30 s.
std::string http_get(const std::string& host, std::uint16_t port, const std::string& path);

// /healthz's loops.chp.last_turn_ms_ago, or -1 when absent (loop stopped,
// server starting).
double chp_turn_age_ms(const std::string& healthz_reply);

}  // namespace zstore::bench
