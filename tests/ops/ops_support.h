// Helpers of the operations tests: HTTP requests to zstored's --http-port,
// Prometheus text parsing, a zstored with HTTP on, and a full dump of a
// data directory's column families for equality checks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/zstored.h"

namespace zstore::testing {

struct HttpReply {
  int status = 0;  // 0: no answer
  std::string body;
  std::string allow;  // the Allow header
};

// bearer: sent as "Authorization: Bearer ..." when not empty.
HttpReply http_request(std::uint16_t port, const std::string& method, const std::string& path,
                       const std::string& form_body = "", const std::string& bearer = "");

// "name{labels}" (as written by the server) -> value. Fails the test on a
// sample line it cannot parse or a sample of a family without HELP and TYPE.
std::map<std::string, double> parse_prometheus(const std::string& text);

// Metric by exact sample name; fails the test when absent.
double metric(const std::map<std::string, double>& m, const std::string& sample);

// The /metrics page of the zstored whose --http-port is port, parsed;
// fails the test unless it answers 200.
std::map<std::string, double> scrape_metrics(std::uint16_t port);

// A zstored on free ports with --http-port on.
struct HttpZstored {
  explicit HttpZstored(std::vector<std::string> extra = {});
  std::uint16_t http_port;
  Zstored server;
  std::map<std::string, double> metrics();
};

// Every (column family, key, value) of a data dir, opened read-only.
std::map<std::string, std::map<std::string, std::string>> dump_columns(const std::string& dir);

// A field of /proc/PID/status in KiB ("VmRSS", "VmHWM"); 0 if absent.
std::uint64_t status_kib(int pid, const std::string& field);
// Resets VmHWM to the current RSS (/proc/PID/clear_refs); false if it cannot.
bool reset_peak_rss(int pid);

// Runs a command, returns its exit code; stdout+stderr appended to *output.
int run_command(const std::vector<std::string>& argv, std::string* output);

}  // namespace zstore::testing
