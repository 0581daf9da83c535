#include "tools/dump/dump_options.h"

#include <boost/program_options.hpp>

#include <charconv>

namespace zstore::dump {
namespace {

namespace po = boost::program_options;

po::options_description describe() {
  po::options_description d("Options");
  d.add_options()("help,h", "print this help")("data-dir", po::value<std::string>(),
                                               "zstore data directory (required; opened read-only)")(
      "format", po::value<std::string>()->default_value("text"), "text | json (one JSON object per line)")(
      "prefix", po::value<std::string>(), "chp: only keys starting with P")("topic", po::value<std::string>(),
                                                                            "dafka: only this subject (exact)")(
      "partition", po::value<std::string>(), "dafka: only this partition (exact producer address)")(
      "from", po::value<std::string>(), "dafka: only offsets >= N (per partition)")(
      "count", po::value<std::string>(), "dafka: at most N records per partition");
  return d;
}

po::options_description everything() {
  po::options_description hidden;
  hidden.add_options()("command", po::value<std::string>(), "chp | dafka | stats");
  po::options_description all;
  all.add(describe()).add(hidden);
  return all;
}

bool parse_u64(const std::string& text, std::uint64_t* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return !text.empty() && ec == std::errc() && ptr == end;
}

// Which command each command-specific option belongs to.
struct OptionOwner {
  const char* name;
  Command command;
};
constexpr OptionOwner kOwners[] = {{"prefix", Command::kChp},
                                   {"topic", Command::kDafka},
                                   {"partition", Command::kDafka},
                                   {"from", Command::kDafka},
                                   {"count", Command::kDafka}};

bool parse_command(const std::string& name, Command* out) {
  if (name == "chp")
    *out = Command::kChp;
  else if (name == "dafka")
    *out = Command::kDafka;
  else if (name == "stats")
    *out = Command::kStats;
  else
    return false;
  return true;
}

ParseOutcome fail(std::string* error, std::string message) {
  *error = std::move(message);
  return ParseOutcome::kError;
}

ParseOutcome fill_filters(const po::variables_map& vm, DumpOptions* out, std::string* error) {
  if (vm.count("prefix")) out->prefix = vm["prefix"].as<std::string>();
  if (vm.count("topic")) out->topic = vm["topic"].as<std::string>();
  if (vm.count("partition")) out->partition = vm["partition"].as<std::string>();
  if (vm.count("from") && !parse_u64(vm["from"].as<std::string>(), &out->from)) {
    return fail(error, "--from needs a non-negative integer, not '" + vm["from"].as<std::string>() + "'");
  }
  if (vm.count("count")) {
    std::uint64_t n = 0;
    if (!parse_u64(vm["count"].as<std::string>(), &n)) {
      return fail(error, "--count needs a non-negative integer, not '" + vm["count"].as<std::string>() + "'");
    }
    out->count = n;
  }
  return ParseOutcome::kRun;
}

ParseOutcome fill(const po::variables_map& vm, DumpOptions* out, std::string* error) {
  if (!vm.count("command")) return fail(error, "missing command: chp, dafka or stats");
  const auto& command = vm["command"].as<std::string>();
  if (!parse_command(command, &out->command)) {
    return fail(error, "unknown command '" + command + "' (chp, dafka or stats)");
  }
  if (!vm.count("data-dir") || vm["data-dir"].as<std::string>().empty()) {
    return fail(error, "--data-dir DIR is required");
  }
  out->data_dir = vm["data-dir"].as<std::string>();
  const auto& format = vm["format"].as<std::string>();
  if (format == "text")
    out->format = Format::kText;
  else if (format == "json")
    out->format = Format::kJson;
  else
    return fail(error, "--format must be text or json, not '" + format + "'");
  for (const auto& owner : kOwners) {
    if (vm.count(owner.name) && owner.command != out->command) {
      return fail(error, std::string("--") + owner.name + " does not apply to '" + command + "'");
    }
  }
  return fill_filters(vm, out, error);
}

}  // namespace

ParseOutcome parse_dump_options(const std::vector<std::string>& args, const char* progress_after_env, DumpOptions* out,
                                std::string* error) {
  po::positional_options_description positional;
  positional.add("command", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(everything()).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    *error = e.what();
    return ParseOutcome::kError;
  }
  if (vm.count("help")) return ParseOutcome::kHelp;
  if (progress_after_env != nullptr) {
    std::uint64_t ms = 0;
    if (!parse_u64(progress_after_env, &ms) || ms > 86400000) {
      *error = std::string("ZSTORE_DUMP_PROGRESS_AFTER_MS must be 0..86400000 ms, not '") + progress_after_env + "'";
      return ParseOutcome::kError;
    }
    out->progress_after = std::chrono::milliseconds(ms);
  }
  return fill(vm, out, error);
}

void print_usage(std::ostream& out) {
  out << "usage: zstore-dump --data-dir DIR [--format text|json] COMMAND [options]\n\n"
         "Commands (the data dir is opened read-only and never modified):\n"
         "  chp   [--prefix P]                  every CHP key: sequence, uuid, properties, value, expiry\n"
         "  dafka [--topic T] [--partition ID] [--from N] [--count N]\n"
         "                                      Dafka records: subject, partition, offset, content\n"
         "  stats                               column families, last CHP sequence, Dafka heads, node address\n\n"
      << describe()
      << "\nExit status: 0 ok; 1 I/O error or corrupt entry while reading;\n"
         "2 bad flags, missing dir, not a zstore database or unknown layout version.\n";
}

}  // namespace zstore::dump
