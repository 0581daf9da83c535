// ChpStore::build_key_index_in_background() (storage/chp/chp_key_scan.h): on a
// map that was not empty at Open, a thread scans it from a snapshot into a
// key index, applies the writes the store reported meanwhile and the store
// adopts the index at its next apply() once the scan caught up; from then
// on no write reads a key's previous entry. Whatever the scan saw or
// missed, live_keys() must equal a scan of the map and the TTL index must
// hold exactly one entry per live key with a TTL (an expiry the index got
// wrong leaves a stale entry behind), checked against a model: after the
// scan of a reopened map, with random writes racing the scan, across
// clear() and close while it runs, with an index bound the map overflows,
// and on a fresh store.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "storage/chp/chp_key_index.h"
#include "tests/storage/chp/chp_key_checks.h"
#include "tests/storage/chp/chp_store_fixture.h"
#include "tests/support/test_support.h"

namespace fs = std::filesystem;
using zstore::storage::ChpKeyIndex;
using zstore::testing::scaled;
using zstore::testing::TempDir;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kTinyIndex = 1024 * 24;  // 1024 slots of 24 bytes: at most 768 keys
constexpr int kBigMap = 200'000;               // a scan of it takes a while (tens of ms at least)
constexpr std::uint64_t kSeedTtl = 3'000'000'000'000;
constexpr std::uint64_t kNewTtl = 4'000'000'000'000;

// Key i of a seeded map: every third has a TTL.
std::uint64_t seeded_expiry(int i) { return i % 3 == 0 ? kSeedTtl + static_cast<std::uint64_t>(i) : 0; }

Model seeded_model(int n) {
  Model model;
  for (int i = 0; i < n; ++i) model.emplace_hint(model.end(), key_n(i), seeded_expiry(i));
  return model;
}

// A closed database whose map holds key_n(0..n-1) (seeded_model(n)),
// written once per size and copied into dir for each test.
void copy_seeded_map(int n, const TempDir& dir) {
  static std::map<int, std::unique_ptr<TempDir>> seeded;
  auto& source = seeded[n];
  if (!source) {
    source = std::make_unique<TempDir>();
    auto o = open_indexed(source->str(), ChpKeyIndex::kDefaultMaxBytes);
    std::vector<ChpWrite> batch;
    for (int i = 0; i < n; ++i) {
      batch.push_back(put(key_n(i), "seed" + std::to_string(i), seeded_expiry(i)));
      if (batch.size() == 5000 || i == n - 1) {
        apply(*o, std::move(batch));
        batch.clear();
      }
    }
    BOOST_REQUIRE_EQUAL(o->live_keys(), static_cast<std::uint64_t>(n));
    close_store(o);
  }
  fs::copy(source->path(), dir.path(), fs::copy_options::recursive | fs::copy_options::overwrite_existing);
}

// Random batches over a big map: rewrites (TTL set, changed, kept or
// dropped), deletes, re-sets of deleted keys, keys written lately (maybe in
// the same batch), keys of the whole map and keys it never held.
// Starts the scan and writes one new key (prefix + n; with ttls, every
// other one with a TTL) per batch until the index is adopted (deadline 20 s),
// checking the key count after each; returns how many it wrote.
int scan_writing_new_keys(Opened& o, Model& model, const std::string& prefix, bool ttls) {
  o->build_key_index_in_background();
  const auto deadline = Clock::now() + scaled(20s);
  int n = 0;
  while (!o->key_index_complete()) {
    BOOST_REQUIRE_MESSAGE(Clock::now() < deadline, "the key index is not complete after 20 s, " << n << " writes");
    std::string key = prefix + std::to_string(n);
    std::uint64_t at = ttls && n % 2 == 0 ? kNewTtl + static_cast<std::uint64_t>(n) : 0;
    apply(*o, {put(key, "v", at)});
    model[key] = at;
    ++n;
    BOOST_REQUIRE_EQUAL(o->live_keys(), model.size());
  }
  return n;
}

class RandomWrites {
 public:
  RandomWrites(std::uint64_t seed, int map_keys, std::size_t max_batch)
      : rng_(seed), map_keys_(map_keys), max_batch_(max_batch) {}

  // Applies one batch, mirrors it in model and adds its keys to touched.
  void batch(Opened& o, Model& model, std::set<std::string>* touched = nullptr) {
    std::size_t n = 1 + rng_() % max_batch_;
    std::vector<ChpWrite> writes;
    for (std::size_t i = 0; i < n; ++i) {
      writes.push_back(next(model));
      if (touched) touched->insert(writes.back().key);
    }
    apply(*o, std::move(writes));
    writes_ += n;
  }

  std::uint64_t writes() const { return writes_; }

 private:
  std::string pick_key() {
    unsigned where = rng_() % 10;
    if (where < 3 && !recent_.empty()) return recent_[rng_() % recent_.size()];
    if (where < 6) return key_n(static_cast<int>(rng_() % 3000));                              // hot keys of the map
    if (where < 8) return key_n(static_cast<int>(rng_() % static_cast<unsigned>(map_keys_)));  // anywhere in it
    return "new" + std::to_string(rng_() % 3000);                                              // keys it never held
  }

  ChpWrite next(Model& model) {
    std::string key = pick_key();
    if (recent_.size() < 64) {
      recent_.push_back(key);
    } else {
      recent_[rng_() % recent_.size()] = key;
    }
    ++serial_;
    unsigned what = rng_() % 20;
    if (what < 5) {
      model.erase(key);
      return del(key);
    }
    std::uint64_t at = 0;
    if (what < 12) {
      at = kNewTtl + rng_() % 1'000'000;  // a new TTL
    } else if (what < 14) {
      auto it = model.find(key);  // the same TTL again
      at = it == model.end() ? 0 : it->second;
    }
    model[key] = at;
    return put(key, "v" + std::to_string(serial_), at);
  }

  std::mt19937_64 rng_;
  int map_keys_;
  std::size_t max_batch_;
  std::vector<std::string> recent_;
  std::uint64_t serial_ = 0;
  std::uint64_t writes_ = 0;
};

// Writes every key of keys once (some deleted, some with a new TTL, some
// with their TTL kept or dropped), in batches of 500, mirrored in model.
void rewrite_all(Opened& o, Model& model, const std::vector<std::string>& keys, unsigned salt) {
  std::vector<ChpWrite> batch;
  for (std::size_t j = 0; j < keys.size(); ++j) {
    const std::string& key = keys[j];
    switch ((j + salt) % 5) {
      case 0:
        model.erase(key);
        batch.push_back(del(key));
        break;
      case 1:
        model[key] = 0;
        batch.push_back(put(key, "rewritten"));
        break;
      case 2: {
        std::uint64_t at = kNewTtl + 7 * j + salt;
        model[key] = at;
        batch.push_back(put(key, "rewritten", at));
        break;
      }
      case 3: {
        auto it = model.find(key);
        std::uint64_t at = it == model.end() ? 0 : it->second;
        model[key] = at;
        batch.push_back(put(key, "rewritten", at));
        break;
      }
      default: {
        std::uint64_t at = kNewTtl + 11 * j + salt;
        model[key] = at;
        batch.push_back(put(key, "rewritten", at));
        break;
      }
    }
    if (batch.size() == 500 || j + 1 == keys.size()) {
      apply(*o, std::move(batch));
      batch.clear();
      BOOST_REQUIRE_EQUAL(o->live_keys(), model.size());
    }
  }
}

std::vector<std::string> keys_of(const Model& model) {
  std::vector<std::string> keys;
  for (const auto& [key, at] : model) keys.push_back(key);
  return keys;
}

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

}  // namespace

// A reopened map of 20k keys (a third with a TTL): writes of brand-new keys
// go on until the scanned index is adopted; then every key of the map,
// those written meanwhile included, is rewritten or deleted without a read,
// and the counts and the TTL index stay exact (a scanned expiry that was
// wrong would leave its old TTL entry behind).
BOOST_AUTO_TEST_CASE(scan_of_a_reopened_map_spares_every_read) {
  TempDir dir;
  copy_seeded_map(20'000, dir);
  Model model = seeded_model(20'000);
  auto o = open_indexed(dir.str(), ChpKeyIndex::kDefaultMaxBytes);
  BOOST_REQUIRE(!o->key_index_complete());
  check_exact(o, model, "reopened");

  auto start = Clock::now();
  int fresh = scan_writing_new_keys(o, model, "fresh", true);
  BOOST_TEST_MESSAGE("index adopted after " << ms_since(start) << " ms and " << fresh << " writes");
  check_exact(o, model, "index adopted");
  const std::uint64_t reads = o->prior_reads();

  rewrite_all(o, model, keys_of(model), 0);
  BOOST_CHECK_EQUAL(o->prior_reads(), reads);
  check_exact(o, model, "every key rewritten");

  // Again: the deleted keys come back, the others change once more.
  std::vector<std::string> all = keys_of(seeded_model(20'000));
  for (int i = 0; i < fresh; ++i) all.push_back("fresh" + std::to_string(i));
  rewrite_all(o, model, all, 3);
  BOOST_CHECK_EQUAL(o->prior_reads(), reads);
  BOOST_CHECK(o->key_index_complete());
  check_exact(o, model, "every key rewritten again");
}

// The race: random batches start right after the scan of a 200k-key map
// does and go on while it runs, until its index is adopted, then more. The
// index adopted must reflect every one of those writes: after it no write
// reads, live_keys() equals the model after every batch, the whole map and
// the TTL index equal it at checkpoints, and every key written while the
// scan ran is written again (a change the scan lost or misapplied would
// miscount it or leave a stale TTL entry).
BOOST_AUTO_TEST_CASE(writes_racing_the_scan_are_not_lost) {
  TempDir dir;
  copy_seeded_map(kBigMap, dir);
  Model model = seeded_model(kBigMap);
  auto o = open_indexed(dir.str(), ChpKeyIndex::kDefaultMaxBytes);
  BOOST_REQUIRE(!o->key_index_complete());

  RandomWrites w(11, kBigMap, 64);
  std::set<std::string> touched;  // written while the scan ran
  auto start = Clock::now();
  o->build_key_index_in_background();
  const auto deadline = start + scaled(20s);
  int during = 0;
  while (!o->key_index_complete()) {
    BOOST_REQUIRE_MESSAGE(Clock::now() < deadline,
                          "the key index is not complete after 20 s, " << during << " batches");
    w.batch(o, model, &touched);
    ++during;
    BOOST_REQUIRE_MESSAGE(o->live_keys() == model.size(),
                          "batch " << during << (o->key_index_complete() ? " (adopted the index)" : " during the scan")
                                   << ": live_keys " << o->live_keys() << ", model " << model.size());
  }
  BOOST_TEST_MESSAGE("index adopted after " << ms_since(start) << " ms, " << during << " batches, " << w.writes()
                                            << " writes, " << touched.size() << " keys");
  BOOST_REQUIRE_GE(during, 2);  // at least one batch went to the scan as a change before it was adopted
  check_exact(o, model, "index adopted");
  const std::uint64_t reads = o->prior_reads();

  for (int b = 1; b <= 300; ++b) {
    w.batch(o, model);
    BOOST_REQUIRE_MESSAGE(o->live_keys() == model.size(), "batch " << b << " after the scan: live_keys "
                                                                   << o->live_keys() << ", model " << model.size());
    BOOST_REQUIRE_MESSAGE(o->prior_reads() == reads,
                          "batch " << b << " after the scan read " << o->prior_reads() - reads << " keys");
    if (b % 150 == 0) check_exact(o, model, std::to_string(b) + " batches after the scan");
  }
  BOOST_CHECK(o->key_index_complete());

  std::vector<std::string> keys(touched.begin(), touched.end());
  rewrite_all(o, model, keys, 0);
  check_exact(o, model, "keys written during the scan rewritten");
  rewrite_all(o, model, keys, 2);
  check_exact(o, model, "keys written during the scan rewritten again");
  BOOST_CHECK_EQUAL(o->prior_reads(), reads);
}

// Closing a store whose scan runs returns promptly; clear() while a scan
// runs drops it: the index is complete at once, and writes after it (keys
// of the old map among them) read nothing and keep the counts exact for
// twice the time a whole scan takes (a scan the clear left running
// would be adopted meanwhile, its keys taken for the cleared map's).
BOOST_AUTO_TEST_CASE(clear_and_close_stop_a_running_scan) {
  TempDir dir;
  copy_seeded_map(kBigMap, dir);
  Model model = seeded_model(kBigMap);
  {
    auto o = open_indexed(dir.str(), ChpKeyIndex::kDefaultMaxBytes);
    o->build_key_index_in_background();
    apply(*o, {put("during", "v", kNewTtl)});  // the scan holds a change
    model["during"] = kNewTtl;
    BOOST_REQUIRE_MESSAGE(!o->key_index_complete(), "the scan of 200k keys was over before the first write");
    auto t = Clock::now();
    o.store.reset();
    double took = ms_since(t);
    BOOST_TEST_MESSAGE("store closed during its scan in " << took << " ms");
    BOOST_CHECK_LT(took, 5000.0);
    BOOST_REQUIRE(o.db->close().ok());
  }

  // How long a whole scan takes here, writes going on.
  double scan_ms = 0;
  {
    auto o = open_indexed(dir.str(), ChpKeyIndex::kDefaultMaxBytes);
    check_exact(o, model, "reopened after a close during the scan");
    auto start = Clock::now();
    scan_writing_new_keys(o, model, "timing", false);
    scan_ms = ms_since(start);
    BOOST_TEST_MESSAGE("a whole scan took " << scan_ms << " ms");
    BOOST_REQUIRE_EQUAL(o->live_keys(), model.size());
    close_store(o);
  }

  auto o = open_indexed(dir.str(), ChpKeyIndex::kDefaultMaxBytes);
  o->build_key_index_in_background();
  RandomWrites before(21, kBigMap, 64);
  before.batch(o, model);
  BOOST_REQUIRE_MESSAGE(!o->key_index_complete(), "the scan of 200k keys was over before the first write");
  auto t = Clock::now();
  BOOST_REQUIRE(o->clear().ok());
  double took = ms_since(t);
  BOOST_TEST_MESSAGE("clear() during the scan took " << took << " ms");
  BOOST_CHECK_LT(took, 5000.0);
  BOOST_CHECK(o->key_index_complete());
  model.clear();
  BOOST_REQUIRE_EQUAL(o->live_keys(), 0u);
  const std::uint64_t reads = o->prior_reads();

  // Writes over keys of the old map and new ones for twice a scan's time
  // (at least 300 ms and 300 batches).
  RandomWrites w(22, kBigMap, 64);
  auto after = Clock::now();
  const double run_ms = std::max(300.0, 2 * scan_ms);
  int b = 0;
  while (b < 300 || ms_since(after) < run_ms) {
    w.batch(o, model);
    ++b;
    BOOST_REQUIRE_MESSAGE(o->live_keys() == model.size(), "batch " << b << " after clear(): live_keys "
                                                                   << o->live_keys() << ", model " << model.size());
    if (b % 100 == 0) check_exact(o, model, std::to_string(b) + " batches after clear()");
    BOOST_REQUIRE_LT(ms_since(after), scaled(20s).count());
  }
  BOOST_TEST_MESSAGE(b << " batches after clear()");
  BOOST_CHECK_EQUAL(o->prior_reads(), reads);
  BOOST_CHECK(o->key_index_complete());
  check_exact(o, model, "after clear()");
}

// A 16 KiB index holds 768 keys, a reopened map has 5k: the scan stops when
// the index is full, is still adopted (a write of a key it read reads
// nothing), the index stays incomplete, and the counts and the TTL index
// stay exact through random writes, which read the keys it does not hold.
BOOST_AUTO_TEST_CASE(scan_past_the_index_bound_keeps_what_it_read) {
  TempDir dir;
  copy_seeded_map(5000, dir);
  Model model = seeded_model(5000);
  auto o = open_indexed(dir.str(), kTinyIndex);
  o->build_key_index_in_background();

  // Writes existing keys in key order (the scan's first ones) until one
  // reads nothing: the scanned index was adopted. Polls the scan thread
  // with growing pauses.
  const auto deadline = Clock::now() + scaled(20s);
  int probe = 0;
  auto pause = 1ms;
  std::uint64_t writes = 0;
  for (;;) {
    BOOST_REQUIRE_MESSAGE(Clock::now() < deadline, "the scanned index was not adopted in 20 s");
    BOOST_REQUIRE_MESSAGE(probe < 600, "600 keys of the map written, each read: the scanned index was not adopted");
    const std::uint64_t before = o->prior_reads();
    std::uint64_t at = probe % 2 == 0 ? kNewTtl + static_cast<std::uint64_t>(probe) : 0;
    apply(*o, {put(key_n(probe), "probe", at)});
    model[key_n(probe)] = at;
    ++writes;
    BOOST_REQUIRE_EQUAL(o->live_keys(), model.size());
    if (o->prior_reads() == before) break;
    ++probe;
    std::this_thread::sleep_for(pause);  // backs off between the probes of a loop with a deadline
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  BOOST_TEST_MESSAGE("scanned index adopted after " << probe << " reads");
  BOOST_CHECK(!o->key_index_complete());
  BOOST_CHECK_LE(o->key_index_bytes(), kTinyIndex);
  check_exact(o, model, "scanned index adopted");

  // Every key of the map once: the keys the scan read (with their expiry)
  // are not read again, the others are.
  const std::uint64_t reads = o->prior_reads();
  std::vector<std::string> keys = keys_of(model);
  rewrite_all(o, model, keys, 1);
  writes += keys.size();
  BOOST_TEST_MESSAGE("rewriting " << keys.size() << " keys read " << o->prior_reads() - reads);
  BOOST_CHECK_GT(o->prior_reads() - reads, 0u);                 // the index did not hold them all
  BOOST_CHECK_LT(o->prior_reads() - reads, keys.size() - 500);  // it held the hundreds the scan read
  check_exact(o, model, "every key rewritten");

  RandomWrites w(31, 5000, 40);
  for (int b = 1; b <= 300; ++b) {
    w.batch(o, model);
    BOOST_REQUIRE_MESSAGE(o->live_keys() == model.size(),
                          "batch " << b << ": live_keys " << o->live_keys() << ", model " << model.size());
    if (b % 100 == 0) check_exact(o, model, std::to_string(b) + " random batches");
  }
  writes += w.writes();
  BOOST_CHECK(!o->key_index_complete());
  BOOST_CHECK_LT(o->prior_reads(), writes);
  BOOST_CHECK_LE(o->key_index_bytes(), kTinyIndex);
}

// A fresh store, and one reopened on a map whose keys were all deleted: the
// index is complete from the start, and asking for a scan changes nothing.
// On a store whose map was empty at open: asking for a scan (at the start
// and again halfway) leaves the index complete through 200 random batches,
// and no write reads.
static void expect_known_from_the_start(Opened& o, Model& model, std::uint64_t seed, const char* where) {
  BOOST_CHECK(o->key_index_complete());
  o->build_key_index_in_background();
  BOOST_CHECK(o->key_index_complete());
  RandomWrites w(seed, 500, 30);
  for (int b = 1; b <= 200; ++b) {
    w.batch(o, model);
    BOOST_REQUIRE_EQUAL(o->live_keys(), model.size());
    BOOST_REQUIRE(o->key_index_complete());
    if (b == 100) o->build_key_index_in_background();  // still nothing to do
  }
  BOOST_CHECK_EQUAL(o->prior_reads(), 0u);
  check_exact(o, model, where);
}

BOOST_AUTO_TEST_CASE(scan_of_an_empty_map_changes_nothing) {
  TempDir dir;
  Model model;
  {
    auto o = open_indexed(dir.str(), ChpKeyIndex::kDefaultMaxBytes);
    expect_known_from_the_start(o, model, 41, "fresh store");
    std::vector<ChpWrite> gone;
    for (const auto& [key, at] : model) gone.push_back(del(key));
    apply(*o, std::move(gone));
    model.clear();
    check_exact(o, model, "every key deleted");
    BOOST_CHECK_EQUAL(o->prior_reads(), 0u);
    close_store(o);
  }
  auto o = open_indexed(dir.str(), ChpKeyIndex::kDefaultMaxBytes);
  expect_known_from_the_start(o, model, 42, "reopened on an empty map");
}
