#include "client/cli/arguments.h"

#include <string>

namespace zstore::cli {

std::uint64_t parse_number(const boost::program_options::variables_map& vm, const char* name, std::uint64_t min,
                           std::uint64_t max) {
  const std::string text = vm[name].as<std::string>();
  std::uint64_t value = 0;
  std::size_t used = 0;
  try {
    if (text.empty() || text[0] == '-' || text[0] == '+') throw std::invalid_argument(text);
    value = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || used == 0 || value < min || value > max) {
    throw UsageError("--" + std::string(name) + " needs a number from " + std::to_string(min) + " to " +
                     std::to_string(max) + ", not '" + text + "'");
  }
  return value;
}

}  // namespace zstore::cli
