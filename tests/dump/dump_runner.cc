#include "tests/dump/dump_runner.h"

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/test_support.h"

namespace zstore::testing {
namespace {

std::string read_all(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out.push_back(c);
  }
  return out + "'";
}

std::string decode_base64(const std::string& text) {
  static const std::string kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    if (c == '=') break;
    auto pos = kAlphabet.find(c);
    BOOST_REQUIRE_MESSAGE(pos != std::string::npos, "bad base64 character in '" + text + "'");
    bits = (bits << 6) | static_cast<std::uint32_t>(pos);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xff));
    }
  }
  return out;
}

}  // namespace

DumpRun run_dump(const std::vector<std::string>& args) {
  TempDir logs;
  std::string command = "exec " + shell_quote(bin_path("zstore-dump"));
  for (const auto& a : args) command += " " + shell_quote(a);
  command += " 2>" + shell_quote((logs.path() / "err").string());
  Process p("/bin/sh", {"-c", command}, logs.path() / "out");
  DumpRun run;
  run.exit_code = p.wait(std::chrono::seconds(30));
  run.out = read_all(logs.path() / "out");
  run.err = read_all(logs.path() / "err");
  return run;
}

std::vector<nlohmann::json> json_lines(const std::string& out) {
  std::vector<nlohmann::json> objects;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    BOOST_REQUIRE_MESSAGE(!j.is_discarded() && j.is_object(), "not a JSON object line: " + line);
    objects.push_back(std::move(j));
  }
  return objects;
}

std::string field_bytes(const nlohmann::json& object, const std::string& name) {
  BOOST_REQUIRE_MESSAGE(object.contains(name) && object[name].is_string(), "no string field " + name);
  std::string value = object[name].get<std::string>();
  auto marker = object.find(name + "_encoding");
  if (marker == object.end()) return value;
  BOOST_REQUIRE(*marker == "base64");
  return decode_base64(value);
}

std::map<std::string, FilePrint> fingerprint(const std::string& dir) {
  std::map<std::string, FilePrint> prints;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    FilePrint p;
    p.size = entry.file_size();
    p.mtime_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(entry.last_write_time().time_since_epoch()).count();
    p.content_hash = std::hash<std::string>{}(read_all(entry.path()));
    prints[std::filesystem::relative(entry.path(), dir).string()] = p;
  }
  return prints;
}

}  // namespace zstore::testing
