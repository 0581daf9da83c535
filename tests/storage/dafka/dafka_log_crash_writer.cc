// The "crashing process" of dafka_log_test: opens the database in DIR,
// appends records (SUBJECT, PARTITION, offset, "content <offset>") for each
// OFFSET in one batch, and exits without closing anything, as a kill -9
// after the append returned would. Exit status 0 when the append succeeded.
// usage: dafka_log_crash_writer DIR SUBJECT PARTITION OFFSET...
// A separate program rather than a fork() of the test: the test process
// already runs RocksDB's background threads, which a forked child lacks
// (and TSan refuses to start threads after such a fork).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "storage/dafka/dafka_log.h"
#include "storage/db/database.h"

int main(int argc, char** argv) {
  using namespace zstore::storage;
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s DIR SUBJECT PARTITION OFFSET...\n", argv[0]);
    return 2;
  }
  std::unique_ptr<Database> db;
  std::unique_ptr<DafkaLog> log;
  if (!Database::Open(argv[1], DatabaseOptions{}, &db).ok()) return 3;
  if (!DafkaLog::Open(db.get(), &log).ok()) return 4;
  std::vector<DafkaRecord> records;
  for (int i = 4; i < argc; ++i) {
    std::uint64_t offset = std::strtoull(argv[i], nullptr, 10);
    records.push_back({argv[2], argv[3], offset, "content " + std::to_string(offset)});
  }
  std::vector<DafkaAppend> out;
  if (!log->append(records, &out).ok()) return 5;
  ::_exit(0);  // no destructor runs: the database is left as a crash leaves it
}
