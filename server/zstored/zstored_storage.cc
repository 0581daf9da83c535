#include "server/zstored/zstored_storage.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <random>

#include <uuid/uuid.h>

#include "protocol/dafka_codec.h"
#include "storage/dafka/node_address.h"

namespace zstore::server {
namespace {

std::string new_node_address() {
  uuid_t uuid;
  uuid_generate(uuid);
  return protocol::dafka::make_address(uuid);
}

// A standalone server's start (ChpStore::start_standalone) with a random
// salt, at the wall clock.
storage::Status start_own_history(storage::ChpStore& store, bool stopped_cleanly) {
  std::random_device random;
  std::uint64_t salt = random() & ((1u << 20) - 1);
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch());
  std::uint64_t resumed = store.last_sequence();
  bool new_epoch = false;
  storage::Status s =
      store.start_standalone(stopped_cleanly, static_cast<std::uint64_t>(now.count()), salt, &new_epoch);
  if (s.ok() && new_epoch && resumed != 0) {
    spdlog::warn(
        "the last stop was not clean: the CHP map resumes after sequence {} in a new epoch from {} (updates "
        "not yet synced at the stop, if any, are lost; with --sync always there are none)",
        resumed, store.last_sequence());
  }
  return s;
}

}  // namespace

bool Storage::open(const ServerOptions& o) {
  storage::DatabaseOptions dbo;
  dbo.sync = o.sync;
  dbo.shared_core = o.shared_core;
  dbo.memtable_budget_bytes = o.memtable_budget_bytes;
  dbo.block_cache_bytes = o.block_cache_bytes;
  if (o.test_power_cut) {
    power_cut = storage::make_power_cut();
    dbo.env = power_cut->env();
  }
  storage::Status s = storage::Database::Open(o.data_dir, dbo, &db);
  if (s.ok())
    s = storage::ChpStore::Open(db.get(), &chp, o.chp_history, storage::ChpKeyIndex::kDefaultMaxBytes,
                                o.chp_key_history);
  if (s.ok()) chp->build_key_index_in_background();  // a restarted map: no write reads a key it held
  // A pair member or replica takes its sequences from the map it follows.
  if (s.ok() && o.ha.empty() && o.replica_of.empty()) s = start_own_history(*chp, db->stopped_cleanly());
  if (s.ok() && o.dafka_port != 0) {
    storage::DafkaLogOptions dlo;
    dlo.retention = o.dafka_retention;
    s = storage::DafkaLog::Open(db.get(), &dafka, dlo);
    if (s.ok()) s = storage::load_or_store_node_address(db.get(), new_node_address(), &node_address);
  }
  if (!s.ok()) spdlog::critical("cannot start: {}", s.message());
  return s.ok();
}

bool Storage::close() {
  dafka.reset();
  chp.reset();
  if (auto s = db->close(); !s.ok()) {
    spdlog::error("database close: {}", s.message());
    return false;
  }
  return true;
}

void DatabaseJobs::start(const ServerOptions& o, Storage& st) {
  if (o.sync == storage::SyncPolicy::kBatch) {
    syncer = std::make_unique<WalSyncer>(*st.db, std::chrono::milliseconds(o.sync_interval_ms));
    syncer->start();
  }
  disk = std::make_unique<DiskWatch>(*st.db, o.min_free_bytes, std::chrono::seconds(1));
  disk->start();
  storage = std::make_unique<StorageWatch>(*st.db, std::chrono::seconds(1));
  storage->start();
  heap = std::make_unique<HeapTrimmer>();
  heap->start();
  if (st.dafka) {
    retainer = std::make_unique<DafkaRetainer>(*st.db, *st.dafka, o.dafka_retention,
                                               std::chrono::milliseconds(o.dafka_retention_interval_ms));
    retainer->start();
  }
}

void DatabaseJobs::stop() {
  if (syncer) syncer->stop();
  if (disk) disk->stop();
  if (storage) storage->stop();
  if (retainer) retainer->stop();
  retainer.reset();
  if (heap) heap->stop();
}

}  // namespace zstore::server
