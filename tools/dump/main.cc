// zstore-dump: offline, read-only dump of a zstore data directory (CHP map,
// Dafka logs, statistics). See docs/dump.md for the formats and exit codes.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "tools/dump/dump_options.h"
#include "tools/dump/dump_source.h"
#include "tools/dump/dumps.h"
#include "tools/dump/exit_codes.h"
#include "tools/dump/progress.h"

namespace {

using namespace zstore::dump;

const char* unit_of(Command command) {
  switch (command) {
    case Command::kChp:
      return "keys";
    case Command::kDafka:
      return "records";
    case Command::kStats:
      return "entries counted";
  }
  return "items";
}

int run(const DumpOptions& options) {
  // Started before opening: replaying a large write-ahead log takes time too.
  Progress progress(std::cerr, isatty(STDERR_FILENO) == 1, unit_of(options.command), options.progress_after);
  OpenResult opened = open_read_only(options.data_dir);
  if (!opened.db) {
    std::cerr << "zstore-dump: " << opened.error << "\n";
    return opened.io_error ? kExitReadError : kExitUsage;
  }
  int code = kExitOk;
  switch (options.command) {
    case Command::kChp:
      code = dump_chp(opened.db.get(), options, std::cout, std::cerr, progress);
      break;
    case Command::kDafka:
      code = dump_dafka(opened.db.get(), options, std::cout, std::cerr, progress);
      break;
    case Command::kStats:
      code = dump_stats(opened.db.get(), options, std::cout, std::cerr, progress);
      break;
  }
  progress.finish();
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "zstore-dump: cannot write the output\n";
    return kExitReadError;
  }
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  DumpOptions options;
  std::string error;
  switch (parse_dump_options(std::vector<std::string>(argv + 1, argv + argc),
                             std::getenv("ZSTORE_DUMP_PROGRESS_AFTER_MS"), &options, &error)) {
    case ParseOutcome::kHelp:
      print_usage(std::cout);
      return kExitOk;
    case ParseOutcome::kError:
      std::cerr << "zstore-dump: " << error << " (see zstore-dump --help)\n";
      return kExitUsage;
    case ParseOutcome::kRun:
      break;
  }
  return run(options);
}
