#include "server/options/options.h"

#include <boost/program_options.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "server/options/options_checks.h"
#include "server/options/options_flags.h"

namespace zstore::server {
namespace po = boost::program_options;
namespace {

// The flag named by environment variable `name` (ZSTORE_DATA_DIR ->
// data-dir), or empty when it names none of ours.
std::string env_flag(const po::options_description& d, const std::string& name) {
  std::string flag;
  if (name.rfind("ZSTORE_", 0) != 0) return flag;
  for (char c : name.substr(7))
    flag.push_back(c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (flag == "help" || d.find_nothrow(flag, false) == nullptr) flag.clear();
  return flag;
}

// "[dafka-topic PREFIX]" sections of the config file: options named
// "dafka-topic PREFIX.dafka-retain-ms" (or -bytes, -records) override the
// defaults for topics starting with PREFIX. Anything else unknown is an error.
constexpr std::string_view kTopicSection = "dafka-topic ";

std::optional<std::string> topic_override(ServerOptions& o, const po::option& opt) {
  const std::string& name = opt.string_key;
  auto dot = name.rfind('.');
  if (name.rfind(kTopicSection, 0) != 0 || dot == std::string::npos || dot <= kTopicSection.size() ||
      opt.value.size() != 1) {
    return "--config: unknown option '" + name + "'";
  }
  std::string prefix = name.substr(kTopicSection.size(), dot - kTopicSection.size());
  std::string key = name.substr(dot + 1);
  std::uint64_t value = 0;
  try {
    std::size_t used = 0;
    value = std::stoull(opt.value[0], &used);
    if (used != opt.value[0].size() || opt.value[0][0] == '-') throw std::invalid_argument("");
  } catch (const std::exception&) {
    return "--config: [dafka-topic " + prefix + "] " + key + ": not a number: '" + opt.value[0] + "'";
  }
  auto it = std::find_if(o.dafka_retention.overrides.begin(), o.dafka_retention.overrides.end(),
                         [&](const auto& e) { return e.first == prefix; });
  if (it == o.dafka_retention.overrides.end()) {
    o.dafka_retention.overrides.emplace_back(prefix, o.dafka_retention.defaults);
    it = std::prev(o.dafka_retention.overrides.end());
  }
  if (key == "dafka-retain-ms") {
    it->second.ms = value;
  } else if (key == "dafka-retain-bytes") {
    it->second.bytes = value;
  } else if (key == "dafka-retain-records") {
    it->second.records = value;
  } else {
    return "--config: [dafka-topic " + prefix + "]: unknown key '" + key + "'";
  }
  return std::nullopt;
}

}  // namespace

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

ParseOutcome parse_options(int argc, const char* const* argv, const char* const* env) {
  ServerOptions o;
  RawFlags raw;
  po::options_description d = describe(o, raw);
  describe_security(d, o);
  po::variables_map vm;
  std::vector<po::option> unrecognized;
  try {
    po::store(po::command_line_parser(argc, argv).options(d).run(), vm);
    for (const char* const* e = env; e != nullptr && *e != nullptr; ++e) {
      std::string kv(*e);
      auto eq = kv.find('=');
      if (eq == std::string::npos) continue;
      std::string flag = env_flag(d, kv.substr(0, eq));
      if (flag.empty() || (vm.count(flag) && !vm[flag].defaulted())) continue;
      po::store(
          po::command_line_parser(std::vector<std::string>{"--" + flag + "=" + kv.substr(eq + 1)}).options(d).run(),
          vm);
    }
    if (vm.count("help")) {
      std::ostringstream out;
      out << "usage: zstored [options]\n\n" << d;
      return {std::nullopt, 0, out.str()};
    }
    if (vm.count("config")) {
      std::ifstream in(vm["config"].as<std::string>());
      if (!in) return {std::nullopt, 2, "--config: cannot read '" + vm["config"].as<std::string>() + "'"};
      auto parsed = po::parse_config_file(in, d, true);
      po::store(parsed, vm);
      unrecognized = parsed.options;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    return {std::nullopt, 2, std::string("zstored: ") + e.what() + " (see --help)"};
  }
  // Overrides start from the final defaults (flags, environment, file).
  for (const auto& opt : unrecognized) {
    if (!opt.unregistered) continue;
    if (auto e = topic_override(o, opt)) return {std::nullopt, 2, "zstored: " + *e};
  }
  if (auto e = finish(o, raw)) return {std::nullopt, 2, "zstored: " + *e};
  return {o, 0, ""};
}

}  // namespace zstore::server
