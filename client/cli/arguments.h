// Command-line parsing shared by zstore-cli's families. A bad command line
// throws UsageError; the family reports it with usage_error() (one form for
// every family) and exits kExitUsage.
#pragma once

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "security/curve_socket.h"

namespace zstore::cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parses a family's arguments: the given options (their bound variables are
// set), and every other word, in order, into the "words" value (read it with
// words_of()). Throws
// UsageError on an unknown option or a missing value.
boost::program_options::variables_map parse_command_line(const std::vector<std::string>& args,
                                                         boost::program_options::options_description options);
// The words parse_command_line() collected (empty when there were none).
std::vector<std::string> words_of(const boost::program_options::variables_map& vm);

// The one way a family reports a bad command line: "zstore-cli FAMILY:
// MESSAGE" and "Try 'zstore-cli FAMILY --help'." on stderr. Returns
// kExitUsage (2).
int usage_error(std::string_view family, std::string_view message);

// The value of option --name (stored as a string in vm) as a decimal number
// from min to max. Throws UsageError naming the option and the range for
// anything else: a sign, a space, trailing text, an overflow.
std::uint64_t parse_number(const boost::program_options::variables_map& vm, const char* name, std::uint64_t min,
                           std::uint64_t max);

// --curve-cert FILE (our NAME.key_secret) and --server-key FILE (the
// server's public NAME.key): CURVE for every connection.
void add_curve_options(boost::program_options::options_description& options);
// What those options ask for (plain when neither is given). Throws
// UsageError when only one is given or a file is missing or malformed.
security::SocketSecurity curve_from(const boost::program_options::variables_map& vm);
// The hint appended to a time-out message when CURVE is on: a server that
// refuses our key, or a wrong server key, looks like a silent server.
std::string curve_hint(const security::SocketSecurity& security);

}  // namespace zstore::cli
