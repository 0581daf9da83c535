// ChpStore with its key index (storage/chp/chp_key_index.h, chp_priors.h): a
// write of a key the index knows takes its previous state from the index,
// any other key is read from RocksDB (prior_reads()) unless the index is
// complete. Whatever the index knows or not, live_keys() must equal a scan
// of the map and the TTL index must hold exactly one entry per live key
// with a TTL: checked against a model after every batch, on a fresh store,
// a reopened one (index incomplete), a tiny index that fills up, and after
// clear().
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "storage/chp/chp_key_index.h"
#include "tests/storage/chp/chp_key_checks.h"
#include "tests/storage/chp/chp_store_fixture.h"
#include "tests/support/test_support.h"

using zstore::storage::ChpKeyIndex;
using zstore::testing::TempDir;

namespace {

constexpr std::size_t kTinyIndex = 1024 * 24;  // 1024 slots of 24 bytes: at most 768 keys

// Random writes over n_keys keys, applied in batches of 1..max_batch and
// mirrored in model; check_exact after every batch.
class Workload {
 public:
  Workload(std::uint64_t seed, int n_keys, std::size_t max_batch)
      : rng_(seed), n_keys_(n_keys), max_batch_(max_batch) {}

  void run(Opened& o, Model& model, int ops) {
    int done = 0;
    while (done < ops) {
      std::size_t n = 1 + rng_() % max_batch_;
      std::vector<ChpWrite> batch;
      for (std::size_t i = 0; i < n; ++i) batch.push_back(next(model));
      apply(*o, batch);
      done += static_cast<int>(n);
      ++batches_;
      check_exact(o, model, "batch " + std::to_string(batches_));
    }
  }

 private:
  ChpWrite next(Model& model) {
    std::string key;
    unsigned kind = rng_() % 20;
    if (kind < 4 && !recent_.empty()) {
      key = recent_[rng_() % recent_.size()];  // a key written lately (maybe in this very batch)
    } else {
      key = key_n(static_cast<int>(rng_() % n_keys_));
    }
    remember(key);
    unsigned what = rng_() % 20;
    ++serial_;
    if (what < 5) {  // delete (the key may or may not exist)
      model.erase(key);
      return del(key);
    }
    std::uint64_t at = 0;
    if (what < 12) {
      at = 2'000'000'000'000 + rng_() % 1'000'000;  // a new TTL
    } else if (what < 14) {
      auto it = model.find(key);  // the same TTL again (its index entry is deleted and put back)
      at = it == model.end() ? 0 : it->second;
    }
    model[key] = at;
    return put(key, "v" + std::to_string(serial_), at);
  }

  void remember(const std::string& key) {
    if (recent_.size() < 64) {
      recent_.push_back(key);
    } else {
      recent_[rng_() % recent_.size()] = key;
    }
  }

  std::mt19937_64 rng_;
  int n_keys_;
  std::size_t max_batch_;
  std::vector<std::string> recent_;
  std::uint64_t serial_ = 0;
  int batches_ = 0;
};

}  // namespace

// A fresh store: the index starts complete and holds every key written, so
// no write reads a previous entry.
BOOST_AUTO_TEST_CASE(fresh_store_reads_no_prior_entries) {
  TempDir dir;
  Model model;
  {
    auto o = open_indexed(dir.str(), ChpKeyIndex::kDefaultMaxBytes);
    BOOST_CHECK_EQUAL(o->key_index_bytes(), 0u);
    Workload w(1, 300, 20);
    w.run(o, model, 1000);
    BOOST_CHECK_EQUAL(o->prior_reads(), 0u);
    BOOST_CHECK_GT(model.size(), 100u);
    BOOST_CHECK_GT(o->key_index_bytes(), 0u);
    BOOST_CHECK_LE(o->key_index_bytes(), ChpKeyIndex::kDefaultMaxBytes);
    close_store(o);
  }
  auto o = open_indexed(dir.str(), ChpKeyIndex::kDefaultMaxBytes);
  check_exact(o, model, "reopened");
  BOOST_CHECK_EQUAL(o->prior_reads(), 0u);
}

// Reopened on a non-empty map the index knows nothing and is incomplete:
// the first write of a key reads its previous entry, later ones do not.
BOOST_AUTO_TEST_CASE(reopened_store_reads_a_key_once) {
  TempDir dir;
  Model model{{"a", 0}, {"b", 500}, {"c", 0}};
  {
    auto o = open_indexed(dir.str(), ChpKeyIndex::kDefaultMaxBytes);
    apply(*o, {put("a", "1"), put("b", "1", 500), put("c", "1")});
    BOOST_CHECK_EQUAL(o->prior_reads(), 0u);
    close_store(o);
  }
  auto o = open_indexed(dir.str(), ChpKeyIndex::kDefaultMaxBytes);
  BOOST_CHECK_EQUAL(o->prior_reads(), 0u);
  check_exact(o, model, "reopened");

  apply(*o, {put("a", "2")});  // read: a exists
  BOOST_CHECK_EQUAL(o->prior_reads(), 1u);
  check_exact(o, model, "a rewritten");
  apply(*o, {put("a", "3")});  // known now
  BOOST_CHECK_EQUAL(o->prior_reads(), 1u);
  check_exact(o, model, "a rewritten again");

  apply(*o, {put("b", "2", 600)});  // read: its old TTL entry (500) goes
  model["b"] = 600;
  BOOST_CHECK_EQUAL(o->prior_reads(), 2u);
  check_exact(o, model, "b rewritten");
  apply(*o, {put("b", "3", 700)});  // from the index: 600 goes
  model["b"] = 700;
  BOOST_CHECK_EQUAL(o->prior_reads(), 2u);
  check_exact(o, model, "b rewritten again");
  apply(*o, {put("b", "4")});  // the TTL dropped
  model["b"] = 0;
  BOOST_CHECK_EQUAL(o->prior_reads(), 2u);
  check_exact(o, model, "b without TTL");

  apply(*o, {put("new", "1", 800)});  // never seen since open: read once (absent)
  model["new"] = 800;
  BOOST_CHECK_EQUAL(o->prior_reads(), 3u);
  check_exact(o, model, "new key");
  apply(*o, {put("new", "2")});
  model["new"] = 0;
  BOOST_CHECK_EQUAL(o->prior_reads(), 3u);
  check_exact(o, model, "new key rewritten");

  apply(*o, {del("c")});  // read: c exists
  model.erase("c");
  BOOST_CHECK_EQUAL(o->prior_reads(), 4u);
  check_exact(o, model, "c deleted");
  apply(*o, {put("c", "again", 900)});  // a deleted key is unknown again (the index is incomplete)
  model["c"] = 900;
  BOOST_CHECK_EQUAL(o->prior_reads(), 5u);
  check_exact(o, model, "c set again");
  apply(*o, {put("c", "more", 901), put("a", "4"), put("new", "3", 902), put("b", "5")});  // all known
  model["c"] = 901;
  model["new"] = 902;
  BOOST_CHECK_EQUAL(o->prior_reads(), 5u);
  check_exact(o, model, "known keys");
}

// 16 KiB of index holds 768 keys of the 3,000 written: most keys are dropped
// for room, the index is incomplete, and every write of a key it does not
// hold must read the key's entry. Counts and the TTL index stay exact, and
// again after a reopen (index incomplete from the start).
BOOST_AUTO_TEST_CASE(tiny_index_keeps_counts_exact) {
  TempDir dir;
  Model model;
  {
    auto o = open_indexed(dir.str(), kTinyIndex);
    Workload w(2, 3000, 50);
    w.run(o, model, 20'000);
    BOOST_CHECK_GT(model.size(), 1000u);   // more keys than the index holds
    BOOST_CHECK_GT(o->prior_reads(), 0u);  // it filled up and had to read
    BOOST_CHECK_LE(o->key_index_bytes(), kTinyIndex);
    BOOST_CHECK_GT(o->key_index_bytes(), 0u);
    close_store(o);
  }
  auto o = open_indexed(dir.str(), kTinyIndex);
  check_exact(o, model, "reopened");
  BOOST_CHECK_EQUAL(o->prior_reads(), 0u);
  Workload w(3, 3000, 50);
  w.run(o, model, 5'000);
  BOOST_CHECK_GT(o->prior_reads(), 0u);
  BOOST_CHECK_LE(o->key_index_bytes(), kTinyIndex);
}

// The same with room for every key but a reopened store: the index learns
// keys as they are written and must never pass off a key it has not seen
// as absent.
BOOST_AUTO_TEST_CASE(reopened_store_keeps_counts_exact) {
  TempDir dir;
  Model model;
  {
    auto o = open_indexed(dir.str(), ChpKeyIndex::kDefaultMaxBytes);
    Workload w(4, 1000, 50);
    w.run(o, model, 2'000);
    close_store(o);
  }
  auto o = open_indexed(dir.str(), ChpKeyIndex::kDefaultMaxBytes);
  Workload w(5, 1000, 50);
  w.run(o, model, 5'000);
  BOOST_CHECK_GT(o->prior_reads(), 0u);
  BOOST_CHECK_LE(o->prior_reads(), 5'000u);
}

// clear() empties the map: the index is complete again, so no write after
// it reads, even of keys the map held before, on a store reopened on a
// non-empty map (index incomplete until the clear).
BOOST_AUTO_TEST_CASE(clear_makes_the_index_complete_again) {
  TempDir dir;
  {
    auto o = open_indexed(dir.str(), ChpKeyIndex::kDefaultMaxBytes);
    std::vector<ChpWrite> writes;
    for (int i = 0; i < 200; ++i) writes.push_back(put(key_n(i), "old", i % 2 == 0 ? 5000 + i : 0));
    apply(*o, writes);
    close_store(o);
  }
  auto o = open_indexed(dir.str(), ChpKeyIndex::kDefaultMaxBytes);
  apply(*o, {put(key_n(0), "x", 7), put(key_n(1), "x")});  // known to the index from now on
  BOOST_CHECK_EQUAL(o->prior_reads(), 2u);
  BOOST_REQUIRE(o->clear().ok());
  BOOST_CHECK_EQUAL(o->key_index_bytes(), 0u);
  Model model;
  check_exact(o, model, "cleared");
  const std::uint64_t reads = o->prior_reads();

  // Keys of the old map (two of them known to the index before the clear),
  // with and without TTL, rewrites and deletes.
  std::vector<ChpWrite> writes;
  for (int i = 0; i < 100; ++i) {
    std::uint64_t at = i % 3 == 0 ? 9000 + i : 0;
    writes.push_back(put(key_n(i), "new", at));
    model[key_n(i)] = at;
  }
  apply(*o, writes);
  check_exact(o, model, "written after the clear");
  apply(*o, {put(key_n(0), "again", 8), del(key_n(1)), del(key_n(150)), put(key_n(3), "again")});
  model[key_n(0)] = 8;
  model.erase(key_n(1));
  model[key_n(3)] = 0;
  check_exact(o, model, "rewritten after the clear");
  Workload w(6, 400, 30);
  w.run(o, model, 2'000);
  BOOST_CHECK_EQUAL(o->prior_reads(), reads);

  // load() (a follower's snapshot) takes its priors from the index too.
  std::vector<ChpRecord> records;
  for (int i = 0; i < 50; ++i) {
    std::uint64_t at = i % 2 == 0 ? 12'000 + i : 0;
    records.push_back({key_n(i * 10), {static_cast<std::uint64_t>(100 + i), at, "", "", "loaded"}, 0});
    model[key_n(i * 10)] = at;
  }
  BOOST_REQUIRE(o->load(records).ok());
  check_exact(o, model, "loaded");
  BOOST_CHECK_EQUAL(o->prior_reads(), reads);

  // clear() then an ascending load (no lookups at all) then writes of the
  // loaded keys: the index learnt them and their expiries from load().
  BOOST_REQUIRE(o->clear().ok());
  model.clear();
  BOOST_REQUIRE(o->load(records).ok());
  for (const auto& r : records) model[r.key] = r.entry.expires_at_ms;
  check_exact(o, model, "loaded after a clear");
  std::vector<ChpWrite> over;
  for (int i = 0; i < 50; i += 2) {
    over.push_back(put(key_n(i * 10), "over", i % 4 == 0 ? 0 : 20'000 + i));
    model[key_n(i * 10)] = i % 4 == 0 ? 0 : 20'000 + i;
  }
  apply(*o, over);
  check_exact(o, model, "loaded keys rewritten");
  BOOST_CHECK_EQUAL(o->prior_reads(), reads);
}

// A conditional write's if-seq that the key index confirms spares the read
// of the key's current version: that version then carries no uuid (the
// read one does), and a key the index holds at another sequence, or does
// not hold (after a reopen), is read as before.
BOOST_AUTO_TEST_CASE(an_if_seq_the_index_confirms_is_not_read) {
  TempDir dir;
  const std::string uuid(16, 'U');
  auto write = [&](std::string key) {
    ChpWrite w = put(std::move(key), "v");
    w.uuid = uuid;
    return w;
  };
  auto versions = [](Opened& o, std::vector<std::string_view> keys, std::vector<std::uint64_t> expected) {
    std::vector<zstore::storage::ChpKeyVersion> v;
    BOOST_REQUIRE(o->current_versions(keys, expected, &v).ok());
    return v;
  };
  std::uint64_t at = 0;
  {
    auto o = open_store(dir.str());
    apply(*o, {write("a"), write("b")});
    at = o->last_sequence();  // b's
    auto v = versions(o, {"a", "b", "b"}, {at, at, 0});
    BOOST_TEST(v[0].found);  // at another sequence: read
    BOOST_TEST(v[0].uuid_is(uuid));
    BOOST_TEST(v[1].found);  // at the expected one: from the index
    BOOST_TEST(v[1].sequence == at);
    BOOST_TEST(!v[1].uuid_is(uuid));
    BOOST_TEST(v[2].uuid_is(uuid));  // none expected: read
    apply(*o, {del("b")});
    BOOST_TEST(!versions(o, {"b"}, {at})[0].found);
    apply(*o, {write("b")});
    at = o->last_sequence();
    close_store(o);
  }
  auto o = open_store(dir.str());
  BOOST_REQUIRE(!o->key_index_complete());
  auto v = versions(o, {"b"}, {at});  // not in the reopened index: read
  BOOST_TEST(v[0].sequence == at);
  BOOST_TEST(v[0].uuid_is(uuid));
  apply(*o, {write("c")});
  v = versions(o, {"c"}, {o->last_sequence()});  // learned since: from the index
  BOOST_TEST(v[0].found);
  BOOST_TEST(!v[0].uuid_is(uuid));
}
