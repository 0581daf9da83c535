// The HTTP side's two guards (issue 16): a bearer token for /metrics and
// /admin/*, and the directory checkpoints may be written under. Pure
// functions apart from load_token's file read; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace zstore::server {

// The token in path: the file's content without surrounding whitespace.
// Returns an error text (unreadable, empty) or empty, filling *token.
std::string load_token(const std::string& path, std::string* token);

// Whether an Authorization header value is "Bearer TOKEN" with our token,
// compared in time independent of where they differ.
bool bearer_matches(std::string_view header, std::string_view token);

// Where a checkpoint named `name` goes under backup_dir: name must be a
// relative path of plain components (no absolute path, no "." or "..",
// no component starting with '.'). nullopt and *error otherwise.
std::optional<std::string> backup_target(const std::string& backup_dir, const std::string& name, std::string* error);

}  // namespace zstore::server
