// ChpAcl: per-client CHP access rules (issue 16), from zstored --acl FILE.
// One rule per line, `NAME PERMS PREFIX`: PERMS is r, w or rw; PREFIX a key
// prefix without spaces, `*` alone meaning every key; blank lines and lines
// starting with `#` are ignored. NAME is the client's name from the CURVE
// allow list (its certificate file's stem). A client may read (snapshots,
// live updates) only keys under its r prefixes and write only under its w
// prefixes; a client without rules may do neither. The HA peer (kPeerName,
// our own key) may do everything. Immutable after parse: thread-safe.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zstore::server {

inline constexpr std::string_view kPeerName = "zstored";

class ChpAcl {
 public:
  // nullopt and *error (naming the line) on a malformed rule.
  static std::optional<ChpAcl> parse(std::string_view text, std::string* error);
  static std::optional<ChpAcl> load(const std::string& path, std::string* error);

  bool may_read(std::string_view name, std::string_view key) const;
  bool may_write(std::string_view name, std::string_view key) const;
  // The topics that give a subscriber `name` what it asked for (`requested`,
  // a key prefix) within its r prefixes: each r prefix inside the request,
  // or the request itself when it lies inside an r prefix.
  std::vector<std::string> permitted_topics(std::string_view name, std::string_view requested) const;
  std::size_t rules() const { return rules_; }

 private:
  using Prefixes = std::map<std::string, std::vector<std::string>, std::less<>>;
  static bool covered(const Prefixes& table, std::string_view name, std::string_view key);
  Prefixes read_;
  Prefixes write_;
  std::size_t rules_ = 0;
};

}  // namespace zstore::server
