// Prometheus text exposition format (version 0.0.4) of zstored's metrics:
// PromWriter writes metric families (HELP, TYPE, samples with escaped
// labels); render_metrics() writes every zstore_ metric of a ServerView
// (listed in docs/operations.md). Reads only atomics and RocksDB, so it may
// run on any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/http/server_view.h"

namespace zstore::server {

class PromWriter {
 public:
  using Labels = std::vector<std::pair<std::string, std::string>>;

  // Starts a family; type is counter or gauge. Names get no prefix here.
  void family(std::string_view name, std::string_view type, std::string_view help);
  // A sample of the current family.
  void sample(std::uint64_t value, const Labels& labels = {});
  void sample(double value, const Labels& labels = {});

  const std::string& text() const { return out_; }

 private:
  void begin_sample(const Labels& labels);
  std::string name_;
  std::string out_;
};

std::string render_metrics(const ServerView& view);

}  // namespace zstore::server
