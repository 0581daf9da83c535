// Command-line checks shared by zstore-cli's families. A bad command line
// throws UsageError; the family prints its message and exits kExitUsage.
#pragma once

#include <boost/program_options/variables_map.hpp>
#include <cstdint>
#include <stdexcept>

namespace zstore::cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The value of option --name (stored as a string in vm) as a decimal number
// from min to max. Throws UsageError naming the option and the range for
// anything else: a sign, a space, trailing text, an overflow.
std::uint64_t parse_number(const boost::program_options::variables_map& vm, const char* name, std::uint64_t min,
                           std::uint64_t max);

}  // namespace zstore::cli
