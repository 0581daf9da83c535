// Checks shared by the tests of ChpStore's key index (chp_key_index_store_test,
// chp_key_scan_test): a store opened with a given index bound, and the
// exactness of live_keys() and of the TTL index against a model of the map.
// Test-only.
#pragma once

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/storage/chp/chp_store_fixture.h"

namespace chp_key_checks {

// The key -> expiry (0: none) the map must hold.
using Model = std::map<std::string, std::uint64_t>;

inline Opened open_indexed(const std::string& dir, std::size_t key_index_bytes) {
  Opened o;
  DatabaseOptions options;
  options.sync = SyncPolicy::kNone;  // nothing here needs durability across a crash
  Status s = Database::Open(dir, options, &o.db);
  BOOST_REQUIRE_MESSAGE(s.ok(), "open database: " << failure(s));
  s = ChpStore::Open(o.db.get(), &o.store, zstore::storage::kDefaultHistoryEntries, key_index_bytes);
  BOOST_REQUIRE_MESSAGE(s.ok(), "open store: " << failure(s));
  return o;
}

// live_keys() against a full scan, the scan against the model, and the TTL
// index against the scan: one entry per live key with a TTL, at its expiry.
inline void check_exact(Opened& o, const Model& model, const std::string& when) {
  BOOST_TEST_CONTEXT(when) {
    auto cursor = o->snapshot("");
    auto records = drain(*cursor);
    BOOST_REQUIRE_EQUAL(o->live_keys(), records.size());
    BOOST_REQUIRE_EQUAL(records.size(), model.size());
    std::vector<std::pair<std::uint64_t, std::string>> want_ttl;
    auto m = model.begin();
    for (const auto& r : records) {  // asserts only on a mismatch: a map may hold 100k's of keys
      if (m->first != r.key) BOOST_REQUIRE_MESSAGE(false, "map holds " << r.key << ", model " << m->first);
      if (m->second != r.entry.expires_at_ms) {
        BOOST_REQUIRE_MESSAGE(false, r.key << " expires at " << r.entry.expires_at_ms << ", model " << m->second);
      }
      if (r.entry.expires_at_ms != 0) want_ttl.emplace_back(r.entry.expires_at_ms, r.key);
      ++m;
    }
    auto ttl = expiry_index(*o.db);
    std::sort(ttl.begin(), ttl.end());
    std::sort(want_ttl.begin(), want_ttl.end());
    if (ttl != want_ttl) {
      std::string extra;
      for (const auto& e : ttl) {
        if (!std::binary_search(want_ttl.begin(), want_ttl.end(), e) && extra.size() < 200) {
          extra += " (" + std::to_string(e.first) + "," + e.second + ")";
        }
      }
      BOOST_REQUIRE_MESSAGE(false, "TTL index has " << ttl.size() << " entries, the map " << want_ttl.size()
                                                    << " keys with a TTL; stale:" << extra);
    }
  }
}

}  // namespace chp_key_checks

using namespace chp_key_checks;
