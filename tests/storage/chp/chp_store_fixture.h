// Helpers shared by the ChpStore tests: a store on a temp database, write
// builders, readers of the map and of the TTL index. Test-only.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>

#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/chp/chp_store.h"
#include "storage/db/database.h"

using zstore::storage::ChpEntry;
using zstore::storage::ChpRecord;
using zstore::storage::ChpSnapshotCursor;
using zstore::storage::ChpStore;
using zstore::storage::ChpWrite;
using zstore::storage::Column;
using zstore::storage::Database;
using zstore::storage::DatabaseOptions;
using zstore::storage::Status;
using zstore::storage::SyncPolicy;

namespace chp_store_fixture {

inline std::string failure(const Status& s) { return s.ok() ? std::string() : s.message(); }

// A database and the CHP store on it; the store goes first on destruction.
struct Opened {
  std::unique_ptr<Database> db;
  std::unique_ptr<ChpStore> store;
  ChpStore& operator*() { return *store; }
  ChpStore* operator->() { return store.get(); }
};

// key_history: as zstored --chp-key-history (ChpStore::Open).
inline Opened open_store(const std::string& dir, DatabaseOptions options = {}, bool key_history = false) {
  Opened o;
  Status s = Database::Open(dir, options, &o.db);
  BOOST_REQUIRE_MESSAGE(s.ok(), "open database: " << failure(s));
  s = ChpStore::Open(o.db.get(), &o.store, zstore::storage::kDefaultHistoryEntries,
                     zstore::storage::ChpKeyIndex::kDefaultMaxBytes, key_history);
  BOOST_REQUIRE_MESSAGE(s.ok(), "open store: " << failure(s));
  return o;
}

inline void close_store(Opened& o) {
  o.store.reset();
  BOOST_REQUIRE(o.db->close().ok());
  o.db.reset();
}

inline ChpWrite put(std::string key, std::string value, std::uint64_t expires_at_ms = 0, std::uint64_t sequence = 0) {
  ChpWrite w;
  w.key = std::move(key);
  w.value = std::move(value);
  w.expires_at_ms = expires_at_ms;
  w.sequence = sequence;
  return w;
}

ChpWrite del(std::string key, std::uint64_t sequence = 0) { return put(std::move(key), "", 0, sequence); }

// Applies writes, requiring success; returns the sequences used.
inline std::vector<std::uint64_t> apply(ChpStore& store, std::vector<ChpWrite> writes) {
  Status s = store.apply(writes);
  BOOST_REQUIRE_MESSAGE(s.ok(), "apply: " << failure(s));
  std::vector<std::uint64_t> sequences;
  for (const auto& w : writes) sequences.push_back(w.sequence);
  return sequences;
}

inline std::optional<ChpEntry> get(ChpStore& store, std::string_view key) {
  ChpEntry entry;
  bool found = true;
  Status s = store.get(key, &entry, &found);
  BOOST_REQUIRE_MESSAGE(s.ok(), "get: " << failure(s));
  if (!found) return std::nullopt;
  return entry;
}

inline std::vector<ChpRecord> drain(ChpSnapshotCursor& cursor) {
  std::vector<ChpRecord> records;
  ChpRecord r;
  while (cursor.next(&r)) records.push_back(r);
  BOOST_CHECK_MESSAGE(cursor.status().ok(), "cursor: " << failure(cursor.status()));
  BOOST_CHECK(!cursor.next(&r));  // stays at the end
  return records;
}

inline std::vector<std::string> keys_under(ChpStore& store, std::string_view prefix) {
  auto cursor = store.snapshot(prefix);
  std::vector<std::string> keys;
  for (auto& r : drain(*cursor)) keys.push_back(r.key);
  return keys;
}

// The (expiry, key) pairs of the TTL index, in index order.
inline std::vector<std::pair<std::uint64_t, std::string>> expiry_index(Database& db) {
  std::vector<std::pair<std::uint64_t, std::string>> out;
  std::unique_ptr<rocksdb::Iterator> it(db.db()->NewIterator(rocksdb::ReadOptions(), db.handle(Column::kChpExpiry)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::uint64_t at = 0;
    std::string_view key;
    BOOST_REQUIRE(zstore::storage::decode_expiry_key(std::string_view(it->key().data(), it->key().size()), &at, &key));
    out.emplace_back(at, std::string(key));
  }
  BOOST_REQUIRE(it->status().ok());
  return out;
}

using Dues = std::vector<std::pair<std::string, std::uint64_t>>;

inline Dues due(ChpStore& store, std::uint64_t now_ms, std::size_t limit = 100) {
  std::vector<ChpStore::Due> out{{"stale", 1}};
  Status s = store.due_expiries(now_ms, limit, &out);
  BOOST_REQUIRE_MESSAGE(s.ok(), "due_expiries: " << failure(s));
  Dues dues;
  for (auto& d : out) dues.emplace_back(d.key, d.expires_at_ms);
  return dues;
}

inline std::string key_n(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "key%08d", i);
  return buf;
}

}  // namespace chp_store_fixture

using namespace chp_store_fixture;
