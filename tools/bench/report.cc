#include "tools/bench/report.h"

#include <cmath>
#include <iomanip>
#include <sstream>

namespace zstore::bench {

Report::Report(std::string mode) { json_["mode"] = std::move(mode); }

void Report::set(const std::string& name, double value, const std::string& unit) {
  // Three decimals are plenty for rates and milliseconds and keep JSON short.
  json_[name] = std::round(value * 1000.0) / 1000.0;
  if (!unit.empty()) units_[name] = unit;
}

void Report::set_text(const std::string& name, const std::string& value) { json_[name] = value; }
void Report::set_flag(const std::string& name, bool value) { json_[name] = value; }

double Report::number(const std::string& name) const { return json_.at(name).get<double>(); }

void Report::print_table(std::ostream& out) const {
  std::size_t width = 0;
  for (const auto& item : json_.items()) width = std::max(width, item.key().size());
  out << std::string(width + 20, '-') << '\n';
  for (const auto& item : json_.items()) {
    out << std::left << std::setw(static_cast<int>(width + 2)) << item.key();
    if (item.value().is_string()) {
      out << item.value().get<std::string>();
    } else if (item.value().is_boolean()) {
      out << (item.value().get<bool>() ? "true" : "false");
    } else {
      std::ostringstream number;
      number << std::fixed << std::setprecision(3) << item.value().get<double>();
      out << std::right << std::setw(16) << number.str();
      if (units_.contains(item.key())) out << ' ' << units_[item.key()].get<std::string>();
    }
    out << '\n';
  }
  out << std::string(width + 20, '-') << '\n';
}

std::string Report::json_line() const { return json_.dump(); }

}  // namespace zstore::bench
