// How zstore-cli prints keys and values: as is when they are text (printable
// ASCII or well-formed UTF-8 without control characters), otherwise escaped
// byte by byte (\\ \n \r \t, \xHH for the rest).
#pragma once

#include <string>
#include <string_view>

namespace zstore::cli {

bool is_printable(std::string_view bytes);
std::string escape(std::string_view bytes);
// is_printable(bytes) ? bytes : escape(bytes)
std::string printable(std::string_view bytes);

}  // namespace zstore::cli
