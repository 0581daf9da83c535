// The three zstore-dump commands on a database opened read-only. Each
// writes records to out (format per docs/dump.md), errors to err, ticks
// progress once per record, and returns the exit status (exit_codes.h).
#pragma once

#include <ostream>

#include "storage/db/database.h"
#include "tools/dump/dump_options.h"
#include "tools/dump/progress.h"

namespace zstore::dump {

// Every CHP key under options.prefix, in key order.
int dump_chp(storage::Database* db, const DumpOptions& options, std::ostream& out, std::ostream& err,
             Progress& progress);

// Dafka records of the selected partitions, in (subject, partition, offset) order.
int dump_dafka(storage::Database* db, const DumpOptions& options, std::ostream& out, std::ostream& err,
               Progress& progress);

// Column family totals, last CHP sequence, Dafka heads, node address.
int dump_stats(storage::Database* db, const DumpOptions& options, std::ostream& out, std::ostream& err,
               Progress& progress);

}  // namespace zstore::dump
