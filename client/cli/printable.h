// How zstore-cli prints keys and values (and times): as is when they are text (printable
// ASCII or well-formed UTF-8 without control characters), otherwise escaped
// byte by byte (\\ \n \r \t, \xHH for the rest).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace zstore::cli {

// Length of the well-formed UTF-8 sequence at the start of s (RFC 3629: no
// overlongs, no surrogates, nothing above U+10FFFF) with its code point in
// *code_point, or 0 when s does not start with one.
std::size_t utf8_sequence(std::string_view s, std::uint32_t* code_point);

bool is_printable(std::string_view bytes);
std::string escape(std::string_view bytes);
// is_printable(bytes) ? bytes : escape(bytes)
std::string printable(std::string_view bytes);

// ms since the Unix epoch as 2026-12-02T09:11:44.123Z (UTC).
std::string utc_time(std::uint64_t ms);

}  // namespace zstore::cli
