// Report: the named results of one zstore-bench run, printed as a human
// table and as one JSON object (on the last line of output with --json).
// Fields keep their insertion order; a name set twice keeps its first place.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace zstore::bench {

class Report {
 public:
  explicit Report(std::string mode);
  void set(const std::string& name, double value, const std::string& unit = "");
  void set_text(const std::string& name, const std::string& value);
  void set_flag(const std::string& name, bool value);  // a JSON true/false
  // The value of a numeric field; throws std::out_of_range when absent.
  double number(const std::string& name) const;
  bool has(const std::string& name) const { return json_.contains(name); }

  void print_table(std::ostream& out) const;
  std::string json_line() const;  // one line, no trailing newline

 private:
  nlohmann::ordered_json json_;
  nlohmann::ordered_json units_;
};

}  // namespace zstore::bench
