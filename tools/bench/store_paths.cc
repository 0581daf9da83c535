#include "tools/bench/store_paths.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <stdexcept>

#include <rocksdb/write_batch.h>

#include "storage/chp/chp_map_batch.h"
#include "storage/chp/chp_store.h"
#include "storage/dafka/dafka_log.h"
#include "storage/db/database.h"
#include "tools/bench/options.h"
#include "tools/bench/stopwatch.h"

namespace zstore::bench {
namespace {

storage::DatabaseOptions bench_database_options() {
  storage::DatabaseOptions options;
  options.sync = database_sync();
  return options;
}

void require(const storage::Status& s, const char* what) {
  if (!s.ok()) throw std::runtime_error(std::string(what) + ": " + s.message());
}

struct ChpDb {
  std::unique_ptr<storage::Database> db;
  std::unique_ptr<storage::ChpStore> store;
  explicit ChpDb(const std::filesystem::path& dir) {
    require(storage::Database::Open(dir.string(), bench_database_options(), &db), "open database");
    require(storage::ChpStore::Open(db.get(), &store), "open CHP store");
  }
  ~ChpDb() {
    store.reset();
    if (db) static_cast<void>(db->close());  // after a failure: the failure is what the caller reports
  }
};

struct DafkaDb {
  std::unique_ptr<storage::Database> db;
  std::unique_ptr<storage::DafkaLog> log;
  explicit DafkaDb(const std::filesystem::path& dir) {
    require(storage::Database::Open(dir.string(), bench_database_options(), &db), "open database");
    require(storage::DafkaLog::Open(db.get(), &log), "open Dafka log");
  }
  void close() {
    log.reset();
    require(db->close(), "close database");
    db.reset();
  }
  ~DafkaDb() {
    log.reset();
    if (db) static_cast<void>(db->close());  // after a failure: the failure is what the caller reports
  }
};

// Writes [0, count) of the chp load, n-th write going to writer n % writers
// as in the chp mode.
// Fills batch with writes [first, first + its size) of the chp load.
void fill_chp(std::vector<storage::ChpWrite>& batch, const LoadSpec& spec, std::uint64_t first) {
  auto writers = static_cast<std::uint64_t>(spec.writers);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    std::uint64_t n = first + i;
    batch[i].key = make_key(spec, static_cast<int>(n % writers), n / writers);
    batch[i].value.assign(spec.value_bytes, static_cast<char>('a' + n % 26));
    batch[i].sequence = 0;
  }
}

// Batch preparation runs outside watch's measure (when there is one).
void apply_chp(storage::ChpStore& store, const Options& o, const LoadSpec& spec, std::uint64_t count,
               Stopwatch* watch) {
  std::vector<storage::ChpWrite> batch;
  for (std::uint64_t first = 0; first < count; first += batch.size()) {
    batch.resize(static_cast<std::size_t>(std::min<std::uint64_t>(o.batch, count - first)));
    unmeasured(watch, [&] { fill_chp(batch, spec, first); });
    require(store.apply(batch), "apply");
  }
}

// The same writes as apply_chp, with only their chp_map entries written:
// the same encoding, in key order, one WAL write per batch, through
// Database::write. No history, metadata, previous-entry reads, TTL index
// or key index.
void put_chp_floor(storage::Database& db, const Options& o, const LoadSpec& spec, std::uint64_t count,
                   Stopwatch& watch) {
  std::vector<storage::ChpWrite> batch;
  rocksdb::WriteBatch wb;
  std::uint64_t sequence = 0;
  for (std::uint64_t first = 0; first < count; first += batch.size()) {
    batch.resize(static_cast<std::size_t>(std::min<std::uint64_t>(o.batch, count - first)));
    watch.exclude([&] { fill_chp(batch, spec, first); });
    for (auto& w : batch) w.sequence = ++sequence;
    wb.Clear();
    storage::put_map_in_key_order(wb, db.handle(storage::Column::kChpMap), batch);
    require(db.write(wb), "write");
  }
}

// Appends records [0, count) of the dafka load: record n goes to writer
// n % writers's partition at offset n / writers. Batch preparation runs
// outside watch's measure (when there is one).
void append_dafka(storage::DafkaLog& log, const Options& o, const LoadSpec& spec, std::uint64_t count,
                  Stopwatch* watch) {
  std::vector<std::string> partitions = store_partitions(spec.writers);
  auto writers = static_cast<std::uint64_t>(spec.writers);
  std::vector<std::string> contents;
  std::vector<storage::DafkaRecordRef> batch;
  std::vector<storage::DafkaAppend> outcomes;
  for (std::uint64_t first = 0; first < count;) {
    auto size = static_cast<std::size_t>(std::min<std::uint64_t>(o.batch, count - first));
    unmeasured(watch, [&] {
      contents.resize(size);
      batch.resize(size);
      for (std::size_t i = 0; i < size; ++i) {
        std::uint64_t n = first + i;
        contents[i].assign(spec.value_bytes, static_cast<char>('a' + n % 26));
        batch[i] = storage::DafkaRecordRef(kBenchTopic, partitions[n % writers], n / writers, contents[i]);
      }
    });
    require(log.append(batch, &outcomes), "append");
    if (std::count(outcomes.begin(), outcomes.end(), storage::DafkaAppend::kStored) != static_cast<long>(size)) {
      throw std::runtime_error("append: a record was not stored");
    }
    first += size;
  }
}

}  // namespace

std::vector<std::string> store_partitions(int writers) {
  std::vector<std::string> out;
  for (int w = 0; w < writers; ++w) {
    char name[33];
    std::snprintf(name, sizeof name, "B3C4E1F0A2D5%020X", static_cast<unsigned>(w));
    out.emplace_back(name);
  }
  return out;
}

StoreRun chp_writes(const Options& o, const LoadSpec& spec, const std::filesystem::path& dir) {
  ChpDb db(dir);
  StoreRun run;
  Stopwatch watch;
  apply_chp(*db.store, o, spec, o.keys, &watch);
  watch.stop(&run, o.keys);
  run.prior_reads = db.store->prior_reads();
  return run;
}

StoreRun chp_floor_writes(const Options& o, const LoadSpec& spec, const std::filesystem::path& dir) {
  std::unique_ptr<storage::Database> db;
  require(storage::Database::Open(dir.string(), bench_database_options(), &db), "open database");
  StoreRun run;
  Stopwatch watch;
  put_chp_floor(*db, o, spec, o.keys, watch);
  watch.stop(&run, o.keys);
  require(db->close(), "close database");
  return run;
}

StoreRun dafka_writes(const Options& o, const LoadSpec& spec, const std::filesystem::path& dir) {
  DafkaDb db(dir);
  StoreRun run;
  Stopwatch watch;
  append_dafka(*db.log, o, spec, o.records, &watch);
  watch.stop(&run, o.records);
  return run;
}

StoreRun snapshot_reads(const Options& o, const LoadSpec& spec, const std::filesystem::path& dir) {
  ChpDb db(dir);
  LoadSpec load = spec;
  load.key_space = 0;
  load.random_keys = false;  // every key once, as the snapshot mode loads
  apply_chp(*db.store, o, load, o.keys, nullptr);
  StoreRun run;
  Stopwatch watch;
  auto cursor = db.store->snapshot("");
  std::uint64_t keys = 0;
  std::size_t bytes = 0;
  storage::ChpRecordView view;
  while (cursor->next_view(&view)) {
    ++keys;
    bytes += view.key.size() + view.entry.value.size();
  }
  watch.stop(&run, keys);
  require(cursor->status(), "snapshot");
  if (keys != o.keys || bytes == 0) throw std::runtime_error("snapshot: read " + std::to_string(keys) + " keys");
  return run;
}

StoreRun replay_reads(const Options& o, const LoadSpec& spec, const std::filesystem::path& dir) {
  {
    DafkaDb db(dir);
    append_dafka(*db.log, o, spec, o.records, nullptr);
    db.close();  // as zstored stopped by SIGTERM: memtables flushed to tables
  }
  DafkaDb db(dir);  // the restart
  StoreRun run;
  Stopwatch watch;
  std::uint64_t records = 0;
  std::uint64_t bytes = 0;
  storage::DafkaRecordView record;  // by views, as zstored answers FETCHes
  for (const std::string& partition : store_partitions(spec.writers)) {
    auto cursor = db.log->read(kBenchTopic, partition, 0, o.records);
    while (cursor->next_view(&record)) {
      ++records;
      bytes += record.content.size();
    }
    require(cursor->status(), "read");
  }
  watch.stop(&run, records);
  if (records != o.records || bytes == 0) {
    throw std::runtime_error("replay: read " + std::to_string(records) + " records of " + std::to_string(o.records) +
                             ", " + std::to_string(bytes) + " content bytes");
  }
  return run;
}

}  // namespace zstore::bench
