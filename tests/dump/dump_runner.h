// Test helpers for zstore-dump: run the real build/bin/zstore-dump with
// stdout and stderr kept apart, parse its JSON lines, and fingerprint a
// directory (names, sizes, mtimes, content hashes) to prove it unchanged.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zstore::testing {

struct DumpRun {
  int exit_code = -1;  // -1: did not finish within the deadline
  std::string out;
  std::string err;
};

// Runs zstore-dump with args (each passed as one argument) and waits up to 30 s.
DumpRun run_dump(const std::vector<std::string>& args);

// One parsed object per non-empty line of out; fails the test on a bad line.
std::vector<nlohmann::json> json_lines(const std::string& out);

// The bytes of a field written by put_bytes: decodes base64 when the
// "<name>_encoding" marker says so.
std::string field_bytes(const nlohmann::json& object, const std::string& name);

struct FilePrint {
  std::uintmax_t size = 0;
  std::int64_t mtime_ns = 0;
  std::size_t content_hash = 0;
  bool operator==(const FilePrint&) const = default;
};
// Every regular file under dir (recursively), by relative path.
std::map<std::string, FilePrint> fingerprint(const std::string& dir);

}  // namespace zstore::testing
