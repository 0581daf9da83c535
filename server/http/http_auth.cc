#include "server/http/http_auth.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace zstore::server {

std::string load_token(const std::string& path, std::string* token) {
  std::ifstream in(path);
  if (!in) return "cannot read --http-token-file " + path;
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const char* space = " \t\r\n";
  auto first = text.find_first_not_of(space);
  if (first == std::string::npos) return "--http-token-file " + path + " is empty";
  *token = text.substr(first, text.find_last_not_of(space) - first + 1);
  return {};
}

bool bearer_matches(std::string_view header, std::string_view token) {
  constexpr std::string_view kScheme = "Bearer ";
  if (token.empty() || header.substr(0, kScheme.size()) != kScheme) return false;
  std::string_view given = header.substr(kScheme.size());
  unsigned char diff = given.size() == token.size() ? 0 : 1;
  for (std::size_t i = 0; i < given.size(); ++i) diff |= given[i] ^ token[i % token.size()];
  return diff == 0;
}

std::optional<std::string> backup_target(const std::string& backup_dir, const std::string& name, std::string* error) {
  std::filesystem::path p(name);
  if (backup_dir.empty()) {
    *error = "checkpoints are off: start zstored with --backup-dir DIR";
    return std::nullopt;
  }
  if (name.empty() || p.is_absolute() || p.has_root_name() || p.has_root_directory()) {
    *error = "dir must name a new subdirectory of the backup directory (relative, no '..'), got '" + name + "'";
    return std::nullopt;
  }
  for (const auto& part : p) {
    std::string s = part.string();
    if (s.empty() || s.front() == '.') {
      *error = "dir must name a new subdirectory of the backup directory (relative, no '..'), got '" + name + "'";
      return std::nullopt;
    }
  }
  return (std::filesystem::path(backup_dir) / p).string();
}

}  // namespace zstore::server
