#include "server/access/chp_acl.h"

#include <fstream>
#include <sstream>
#include <utility>

namespace zstore::server {

std::optional<ChpAcl> ChpAcl::parse(std::string_view text, std::string* error) {
  ChpAcl acl;
  std::istringstream in{std::string(text)};
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    std::istringstream words(line);
    std::string name, perms, prefix, extra;
    if (!(words >> name) || name.front() == '#') continue;
    words >> perms >> prefix;
    if (prefix.empty() || (words >> extra) || (perms != "r" && perms != "w" && perms != "rw")) {
      *error = "line " + std::to_string(number) + ": expected 'NAME r|w|rw PREFIX', got '" + line + "'";
      return std::nullopt;
    }
    if (prefix == "*") prefix.clear();
    if (perms.find('r') != std::string::npos) acl.read_[name].push_back(prefix);
    if (perms.find('w') != std::string::npos) acl.write_[name].push_back(prefix);
    ++acl.rules_;
  }
  return acl;
}

std::optional<ChpAcl> ChpAcl::load(const std::string& path, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read " + path;
    return std::nullopt;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  auto acl = parse(ss.str(), error);
  if (!acl) *error = path + ": " + *error;
  return acl;
}

bool ChpAcl::covered(const Prefixes& table, std::string_view name, std::string_view key) {
  if (name == kPeerName) return true;
  auto it = table.find(name);
  if (it == table.end()) return false;
  for (const auto& prefix : it->second) {
    if (key.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

bool ChpAcl::may_read(std::string_view name, std::string_view key) const { return covered(read_, name, key); }
bool ChpAcl::may_write(std::string_view name, std::string_view key) const { return covered(write_, name, key); }

std::vector<std::string> ChpAcl::permitted_topics(std::string_view name, std::string_view requested) const {
  if (name == kPeerName) return {std::string(requested)};
  std::vector<std::string> out;
  auto it = read_.find(name);
  if (it == read_.end()) return out;
  for (const auto& prefix : it->second) {
    if (requested.substr(0, prefix.size()) == prefix) return {std::string(requested)};  // inside a prefix
    if (std::string_view(prefix).substr(0, requested.size()) == requested) out.push_back(prefix);
  }
  return out;
}

ChpAclFile::ChpAclFile(std::string path, ChpAcl rules)
    : path_(std::move(path)), rules_(std::make_shared<const ChpAcl>(std::move(rules))) {}

std::unique_ptr<ChpAclFile> ChpAclFile::open(const std::string& path, std::string* error) {
  auto rules = ChpAcl::load(path, error);
  if (!rules) return nullptr;
  return std::make_unique<ChpAclFile>(path, std::move(*rules));
}

std::shared_ptr<const ChpAcl> ChpAclFile::current() const {
  std::lock_guard lock(mutex_);
  return rules_;
}

std::string ChpAclFile::reload() {
  std::string error;
  auto rules = ChpAcl::load(path_, &error);
  if (!rules) return error;
  auto next = std::make_shared<const ChpAcl>(std::move(*rules));
  std::lock_guard lock(mutex_);
  rules_ = std::move(next);
  generation_.fetch_add(1, std::memory_order_release);
  return {};
}

}  // namespace zstore::server
