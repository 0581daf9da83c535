// ChpAcl: per-client CHP access rules (issue 16), from zstored --acl FILE.
// One rule per line, `NAME PERMS PREFIX`: PERMS is r, w or rw; PREFIX a key
// prefix without spaces, `*` alone meaning every key; blank lines and lines
// starting with `#` are ignored. NAME is the client's name from the CURVE
// allow list (its certificate file's stem). A client may read (snapshots,
// live updates) only keys under its r prefixes and write only under its w
// prefixes; a client without rules may do neither. The HA peer (kPeerName,
// our own key) may do everything. Immutable after parse: thread-safe.
// ChpAclFile holds the rules of the --acl file in force and swaps in a new
// set when the file is re-read (SIGHUP); a bad file keeps the old rules.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zstore::server {

inline constexpr std::string_view kPeerName = "zstored";
// The ZAP domain of the HA state port (ha_link.h): only the pair's own key
// (kPeerName) may connect there, not the clients of the allow list.
inline constexpr const char* kHaZapDomain = "ha";

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
  // Whether both give every client the same r prefixes.
  bool same_reads(const ChpAcl& other) const { return read_ == other.read_; }

 private:
  using Prefixes = std::map<std::string, std::vector<std::string>, std::less<>>;
  static bool covered(const Prefixes& table, std::string_view name, std::string_view key);
  Prefixes read_;
  Prefixes write_;
  std::size_t rules_ = 0;
};

// The rules read from one file, replaced as a whole by reload(). Thread-safe:
// readers take the current set and keep using it while a reload swaps in the
// next one.
class ChpAclFile {
 public:
  ChpAclFile(std::string path, ChpAcl rules);
  // Reads path; nullopt and *error (naming the file and line) if it cannot.
  static std::unique_ptr<ChpAclFile> open(const std::string& path, std::string* error);

  std::shared_ptr<const ChpAcl> current() const;
  // Re-reads the file: the new rules hold from the next message on. Returns
  // an error text (unreadable file, malformed rule), keeping the old rules;
  // empty on success.
  std::string reload();
  // How many reloads succeeded: a reader polls it to see new rules.
  std::uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  mutable std::mutex mutex_;
  std::shared_ptr<const ChpAcl> rules_;
  std::atomic<std::uint64_t> generation_{0};
};

}  // namespace zstore::server
