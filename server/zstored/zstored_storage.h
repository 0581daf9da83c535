// What zstored serves from (the database, the CHP map, the Dafka log and
// the node address) and the jobs that look after the database on their own
// threads (WAL sync, free-space watch, Dafka retention). Opened and started
// before the reactors, stopped after them.
#pragma once

#include <memory>
#include <string>

#include "server/jobs/dafka_retainer.h"
#include "server/jobs/disk_watch.h"
#include "server/jobs/heap_trimmer.h"
#include "server/jobs/storage_watch.h"
#include "server/options/options.h"
#include "server/jobs/wal_syncer.h"
#include "storage/chp/chp_store.h"
#include "storage/dafka/dafka_log.h"
#include "storage/db/database.h"
#include "storage/faults/power_cut_fs.h"

namespace zstore::server {

struct Storage {
  std::unique_ptr<storage::PowerCut> power_cut;  // --test-power-cut: the database's Env
  std::unique_ptr<storage::Database> db;
  std::unique_ptr<storage::ChpStore> chp;
  std::unique_ptr<storage::DafkaLog> dafka;  // null with --dafka-port 0
  std::string node_address;

  // Opens it all; false (after a critical log line) when it cannot.
  bool open(const ServerOptions& o);
  // Closes the log, the map and the database; false (after an error log
  // line) when the database does not close cleanly.
  bool close();
};

// The database's background jobs, and the heap's trim; each runs when the
// options enable it.
struct DatabaseJobs {
  std::unique_ptr<WalSyncer> syncer;        // --sync batch
  std::unique_ptr<DiskWatch> disk;          // always (it watches nothing with --min-free-bytes 0)
  std::unique_ptr<StorageWatch> storage;    // always: exits when writes failed for good
  std::unique_ptr<DafkaRetainer> retainer;  // with a Dafka log
  std::unique_ptr<HeapTrimmer> heap;        // always

  void start(const ServerOptions& o, Storage& st);
  // The syncer first (it syncs what the reactors wrote last). Idempotent.
  void stop();
};

}  // namespace zstore::server
