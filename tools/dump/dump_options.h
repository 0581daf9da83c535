// Command line of zstore-dump:
//   zstore-dump --data-dir DIR [--format text|json] chp [--prefix P]
//   zstore-dump --data-dir DIR [--format text|json] dafka [--topic T] [--partition ID] [--from N] [--count N]
//   zstore-dump --data-dir DIR [--format text|json] stats
// Options may come before or after the command; an option of another
// command, a repeated or unknown option, or a bad number is a usage error.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace zstore::dump {

enum class Command { kChp, kDafka, kStats };
enum class Format { kText, kJson };

struct DumpOptions {
  std::string data_dir;
  Command command = Command::kStats;
  Format format = Format::kText;
  std::string prefix;                    // chp: keys starting with it
  std::optional<std::string> topic;      // dafka: exact subject
  std::optional<std::string> partition;  // dafka: exact partition (producer address)
  std::uint64_t from = 0;                // dafka: lowest offset, per partition
  std::optional<std::uint64_t> count;    // dafka: at most this many records per partition
  // Run time before progress shows on a terminal; environment variable
  // ZSTORE_DUMP_PROGRESS_AFTER_MS (milliseconds) overrides it.
  std::chrono::milliseconds progress_after{2000};
};

enum class ParseOutcome { kRun, kHelp, kError };

// Parses args (without argv[0]) and progress_after_env (the value of
// ZSTORE_DUMP_PROGRESS_AFTER_MS, or null). On kError, *error says what is wrong.
ParseOutcome parse_dump_options(const std::vector<std::string>& args, const char* progress_after_env, DumpOptions* out,
                                std::string* error);

void print_usage(std::ostream& out);

}  // namespace zstore::dump
