// The value of one field of application/x-www-form-urlencoded text: a query
// string or a POST form body ("dir=NAME&x=1"), percent-decoded with '+' as a
// space. Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace zstore::server {

// The first field called name in form, decoded; nullopt when there is none.
// A malformed escape (a '%' not followed by two hex digits) is kept as is.
std::optional<std::string> form_value(std::string_view form, std::string_view name);

}  // namespace zstore::server
