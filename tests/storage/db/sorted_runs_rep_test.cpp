// Tests of SortedRunsRepFactory (storage/db/sorted_runs_rep.h), the memtable
// representation of a sorted tail plus sorted runs merged like a binary
// counter, through the plain RocksDB API: everything read back (Get,
// MultiGet, iterators in both directions, seeks, snapshots, merges, flushes,
// WAL recovery, concurrent readers and writers) is compared with a
// std::map model. Small tails make many runs and merges with few keys.
// The same random differential run also goes through RocksDB's default skip
// list as a control, so a failure seen only with the sorted runs points at
// the representation, not at the test.
#include "storage/db/sorted_runs_rep.h"

#include <rocksdb/comparator.h>
#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/memtablerep.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/metadata.h>
#include <rocksdb/options.h>
#include <rocksdb/slice.h>
#include <rocksdb/snapshot.h>
#include <rocksdb/write_batch.h>

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/test_support.h"

#if defined(__SANITIZE_ADDRESS__)
// The sanitizer runtime's count of heap bytes in use (declared in LLVM's
// sanitizer/allocator_interface.h, which GCC does not install).
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#endif

using zstore::storage::SortedRunsRepFactory;
using zstore::testing::TempDir;

namespace {

using Model = std::map<std::string, std::string>;
using Entries = std::vector<std::pair<std::string, std::string>>;
using FactoryPtr = std::shared_ptr<rocksdb::MemTableRepFactory>;

constexpr std::size_t kLargeBuffer = std::size_t{64} << 20;

// As zstore's chp_map: bytewise keys, compared inline.
FactoryPtr sorted_runs(std::size_t tail) {
  return std::make_shared<SortedRunsRepFactory>(tail, rocksdb::BytewiseComparator());
}
FactoryPtr skip_list() { return std::make_shared<rocksdb::SkipListFactory>(); }

// Keys and values may hold any byte: shows them escaped.
std::string printable(const std::string& s) {
  std::ostringstream out;
  out << '"';
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"') {
      out << c;
    } else {
      static const char* hex = "0123456789abcdef";
      out << "\\x" << hex[c >> 4] << hex[c & 15];
    }
  }
  out << '"';
  return out.str();
}

std::string printable(const rocksdb::Slice& s) { return printable(s.ToString()); }

rocksdb::Options db_options(FactoryPtr factory, std::size_t write_buffer_size = kLargeBuffer) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.memtable_factory = std::move(factory);
  options.write_buffer_size = write_buffer_size;
  options.allow_concurrent_memtable_write = true;
  return options;
}

std::unique_ptr<rocksdb::DB> open_db(const std::string& dir, const rocksdb::Options& options) {
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, dir, &raw);
  BOOST_REQUIRE_MESSAGE(s.ok(), "open '" << dir << "': " << s.ToString());
  BOOST_REQUIRE(raw != nullptr);
  return std::unique_ptr<rocksdb::DB>(raw);
}

void close_db(std::unique_ptr<rocksdb::DB>& db) {
  rocksdb::Status s = db->Close();
  BOOST_REQUIRE_MESSAGE(s.ok(), "close: " << s.ToString());
  db.reset();
}

uint64_t int_property(rocksdb::DB& db, const std::string& name) {
  uint64_t value = 0;
  BOOST_REQUIRE_MESSAGE(db.GetIntProperty(name, &value), "property " << name);
  return value;
}

std::size_t sst_count(rocksdb::DB& db) {
  std::vector<rocksdb::LiveFileMetaData> files;
  db.GetLiveFilesMetaData(&files);
  return files.size();
}

void require_ok(const rocksdb::Status& s, const std::string& where) {
  if (!s.ok()) BOOST_FAIL(where << ": " << s.ToString());
}

// Random keys from a small key space (so keys repeat), of varied lengths and
// bytes: "" and keys with a 0x00 or 0xff byte sort among the others.
class Gen {
 public:
  Gen(uint32_t seed, int key_space) : rng_(seed), key_space_(key_space) {}

  std::mt19937& rng() { return rng_; }
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(int percent) { return uniform(0, 99) < percent; }

  static std::string key_of(int n) {
    if (n == 0) return std::string();
    std::string key = "k" + std::to_string(n);
    if (n % 10 == 9) key.append(std::string("\0\xff", 2));
    if (n % 10 == 7) key.push_back('\0');
    if (n % 10 == 3) key.append(130, static_cast<char>('a' + n % 7));  // a 2-byte length prefix in the memtable
    return key;
  }
  std::string key() { return key_of(uniform(0, key_space_ - 1)); }

  // A value that tells its write apart from every other write of the key.
  std::string value(int min_filler = 0, int max_filler = 16) {
    std::string value = "v" + std::to_string(serial_++) + ":";
    int filler = uniform(min_filler, max_filler);
    for (int i = 0; i < filler; ++i) value.push_back(static_cast<char>(uniform(0, 255)));
    return value;
  }

  // A seek target: an existing key, a key between existing ones (an
  // extension or a truncation), or one before or after everything.
  std::string target() {
    switch (uniform(0, 6)) {
      case 0:
        return key();
      case 1:
        return key() + std::string(1, static_cast<char>(uniform(0, 255)));
      case 2: {
        std::string k = key();
        if (!k.empty()) k.pop_back();
        return k;
      }
      case 3:
        return "k" + std::to_string(uniform(0, 9));
      case 4: {
        static const char* const kEdges[] = {"", "k", "j", "l", "\xff\xff"};
        return kEdges[uniform(0, 4)];
      }
      default: {
        std::string t = "k";
        int digits = uniform(1, 5);
        for (int i = 0; i < digits; ++i) t.push_back(static_cast<char>('0' + uniform(0, 9)));
        return t;
      }
    }
  }

 private:
  std::mt19937 rng_;
  int key_space_;
  uint64_t serial_ = 0;
};

Entries entries_of(const Model& model) { return Entries(model.begin(), model.end()); }

Entries scan_forward(rocksdb::DB& db, const rocksdb::ReadOptions& ro, const std::string& where) {
  Entries out;
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(ro));
  for (it->SeekToFirst(); it->Valid(); it->Next()) out.emplace_back(it->key().ToString(), it->value().ToString());
  require_ok(it->status(), where + ": forward scan");
  return out;
}

Entries scan_backward(rocksdb::DB& db, const rocksdb::ReadOptions& ro, const std::string& where) {
  Entries out;
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(ro));
  for (it->SeekToLast(); it->Valid(); it->Prev()) out.emplace_back(it->key().ToString(), it->value().ToString());
  require_ok(it->status(), where + ": backward scan");
  std::reverse(out.begin(), out.end());
  return out;
}

// Fails with the first difference between two sorted listings.
void require_same(const Entries& got, const Entries& want, const std::string& where) {
  std::size_t n = std::min(got.size(), want.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (got[i] != want[i]) {
      BOOST_FAIL(where << ": entry " << i << " is " << printable(got[i].first) << " = " << printable(got[i].second)
                       << ", model has " << printable(want[i].first) << " = " << printable(want[i].second));
    }
  }
  if (got.size() != want.size()) {
    const Entries& longer = got.size() > want.size() ? got : want;
    BOOST_FAIL(where << ": " << got.size() << " entries, model has " << want.size() << "; first extra one "
                     << (got.size() > want.size() ? "read" : "missing") << ": " << printable(longer[n].first));
  }
}

// Fails unless it stands where index idx of want does (out of range: not
// valid).
void require_at(rocksdb::Iterator& it, const Entries& want, long idx, const std::string& where) {
  require_ok(it.status(), where);
  bool valid = idx >= 0 && idx < static_cast<long>(want.size());
  if (it.Valid() != valid) {
    BOOST_FAIL(where << ": iterator " << (it.Valid() ? "at " + printable(it.key()) : std::string("not valid"))
                     << ", model " << (valid ? "at " + printable(want[idx].first) : std::string("past the end")));
  }
  if (valid && (it.key() != rocksdb::Slice(want[idx].first) || it.value() != rocksdb::Slice(want[idx].second))) {
    BOOST_FAIL(where << ": iterator at " << printable(it.key()) << " = " << printable(it.value()) << ", model at "
                     << printable(want[idx].first) << " = " << printable(want[idx].second));
  }
}

long lower_index(const Entries& e, const std::string& target) {
  auto pos =
      std::lower_bound(e.begin(), e.end(), target,
                       [](const std::pair<std::string, std::string>& a, const std::string& t) { return a.first < t; });
  return static_cast<long>(pos - e.begin());
}

long upper_index(const Entries& e, const std::string& target) {
  auto pos =
      std::upper_bound(e.begin(), e.end(), target,
                       [](const std::string& t, const std::pair<std::string, std::string>& a) { return t < a.first; });
  return static_cast<long>(pos - e.begin());
}

// From where it stands (index idx of want): a fixed Next/Prev/Next zigzag,
// then a random walk, each step checked.
void walk(rocksdb::Iterator& it, const Entries& want, long idx, Gen& gen, const std::string& where) {
  static const bool kZigzag[] = {true, false, true, false, false, true, true};
  int steps = gen.uniform(4, 24);
  for (int step = 0; step < steps; ++step) {
    if (!it.Valid()) return;
    bool next = step < static_cast<int>(std::size(kZigzag)) ? kZigzag[step] : gen.chance(50);
    if (next) {
      it.Next();
      ++idx;
    } else {
      it.Prev();
      --idx;
    }
    require_at(it, want, idx, where + (next ? ", Next #" : ", Prev #") + std::to_string(step));
  }
}

// Compares everything a reader of ro can see with model: full scans both
// ways, Get and MultiGet of present and absent keys, Seek and SeekForPrev to
// random targets followed by walks that change direction, and scans within
// random bounds.
void check_db(rocksdb::DB& db, const rocksdb::ReadOptions& ro, const Model& model, Gen& gen, const std::string& where,
              int probes = 40) {
  const Entries want = entries_of(model);
  require_same(scan_forward(db, ro, where), want, where + ": forward scan");
  require_same(scan_backward(db, ro, where), want, where + ": backward scan");

  for (int i = 0; i < probes; ++i) {
    std::string key = (!want.empty() && gen.chance(50)) ? want[gen.uniform(0, static_cast<int>(want.size()) - 1)].first
                                                        : gen.target();
    std::string value;
    rocksdb::Status s = db.Get(ro, key, &value);
    auto found = model.find(key);
    if (found == model.end()) {
      if (!s.IsNotFound()) {
        BOOST_FAIL(where << ": Get " << printable(key) << " (absent) gave " << s.ToString() << " " << printable(value));
      }
    } else {
      require_ok(s, where + ": Get " + printable(key));
      if (value != found->second) {
        BOOST_FAIL(where << ": Get " << printable(key) << " = " << printable(value) << ", model "
                         << printable(found->second));
      }
    }
  }

  {
    const std::size_t n = 16;
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < n; ++i) keys.push_back(gen.chance(50) ? gen.key() : gen.target());
    std::vector<rocksdb::Slice> slices(keys.begin(), keys.end());
    std::vector<rocksdb::PinnableSlice> values(n);
    std::vector<rocksdb::Status> statuses(n);
    db.MultiGet(ro, db.DefaultColumnFamily(), n, slices.data(), values.data(), statuses.data());
    for (std::size_t i = 0; i < n; ++i) {
      auto found = model.find(keys[i]);
      bool ok =
          found == model.end() ? statuses[i].IsNotFound() : statuses[i].ok() && values[i].ToString() == found->second;
      if (!ok) {
        BOOST_FAIL(where << ": MultiGet " << printable(keys[i]) << " gave " << statuses[i].ToString() << " "
                         << printable(values[i].ToString()) << ", model "
                         << (found == model.end() ? std::string("absent") : printable(found->second)));
      }
    }
  }

  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(ro));
  for (int i = 0; i < probes; ++i) {
    std::string target = gen.target();
    if (gen.chance(50)) {
      it->Seek(target);
      std::string w = where + ": Seek " + printable(target);
      long idx = lower_index(want, target);
      require_at(*it, want, idx, w);
      walk(*it, want, idx, gen, w);
    } else {
      it->SeekForPrev(target);
      std::string w = where + ": SeekForPrev " + printable(target);
      long idx = upper_index(want, target) - 1;
      require_at(*it, want, idx, w);
      walk(*it, want, idx, gen, w);
    }
  }
  // From either end, then turning back.
  it->SeekToFirst();
  require_at(*it, want, 0, where + ": SeekToFirst");
  walk(*it, want, 0, gen, where + ": SeekToFirst");
  it->SeekToLast();
  require_at(*it, want, static_cast<long>(want.size()) - 1, where + ": SeekToLast");
  walk(*it, want, static_cast<long>(want.size()) - 1, gen, where + ": SeekToLast");

  for (int i = 0; i < 4; ++i) {
    std::string lo = gen.target(), hi = gen.target();
    if (hi < lo) std::swap(lo, hi);
    rocksdb::Slice lo_slice(lo), hi_slice(hi);
    rocksdb::ReadOptions bounded = ro;
    bounded.iterate_lower_bound = &lo_slice;
    bounded.iterate_upper_bound = &hi_slice;
    Entries in_range(want.begin() + lower_index(want, lo), want.begin() + lower_index(want, hi));
    std::string w = where + ": bounds [" + printable(lo) + ", " + printable(hi) + ")";
    require_same(scan_forward(db, bounded, w), in_range, w + " forward");
    require_same(scan_backward(db, bounded, w), in_range, w + " backward");
  }
}

// Applies one random write to db and model: a Put, a Delete (of a present
// or absent key), a WriteBatch of several (possibly of one key twice), or
// rarely a DeleteRange. Returns how many memtable entries it added.
uint64_t random_write(rocksdb::DB& db, Model& model, Gen& gen, const std::string& where, int min_value = 0,
                      int max_value = 16) {
  int dice = gen.uniform(0, 99);
  rocksdb::WriteOptions wo;
  if (dice < 55) {
    std::string key = gen.key(), value = gen.value(min_value, max_value);
    require_ok(db.Put(wo, key, value), where + ": Put");
    model[key] = value;
    return 1;
  }
  if (dice < 72) {
    std::string key = (!model.empty() && gen.chance(70))
                          ? std::next(model.begin(), gen.uniform(0, static_cast<int>(model.size()) - 1))->first
                          : gen.key();
    require_ok(db.Delete(wo, key), where + ": Delete");
    model.erase(key);
    return 1;
  }
  if (dice < 98) {
    rocksdb::WriteBatch batch;
    int ops = gen.uniform(2, 8);
    std::string last;
    for (int i = 0; i < ops; ++i) {
      std::string key = (i > 0 && gen.chance(20)) ? last : gen.key();
      if (gen.chance(75)) {
        std::string value = gen.value(min_value, max_value);
        require_ok(batch.Put(key, value), where + ": batch Put");
        model[key] = value;
      } else {
        require_ok(batch.Delete(key), where + ": batch Delete");
        model.erase(key);
      }
      last = key;
    }
    require_ok(db.Write(wo, &batch), where + ": Write");
    return static_cast<uint64_t>(ops);
  }
  // A narrow range: a key and some of its extensions ("k12" to "k125").
  std::string lo = gen.key();
  std::string hi = lo + std::string(1, static_cast<char>(gen.uniform(1, 255)));
  require_ok(db.DeleteRange(wo, db.DefaultColumnFamily(), lo, hi), where + ": DeleteRange");
  model.erase(model.lower_bound(lo), model.lower_bound(hi));
  return 1;
}

std::string describe(const char* name, uint32_t seed, const std::string& factory) {
  return std::string(name) + " seed=" + std::to_string(seed) + " " + factory;
}

// The differential run of case 1: `ops` random writes, all within the
// active memtable, checked against the model every `check_every`.
// memtable_bloom: as zstore's chp_map column, a whole-key bloom filter in
// front of the memtable (Gets reach the representation when it says maybe).
void differential(FactoryPtr factory, const std::string& label, uint32_t seed, int ops, int key_space, int check_every,
                  bool memtable_bloom = false) {
  TempDir dir;
  rocksdb::Options options = db_options(std::move(factory));
  if (memtable_bloom) {
    options.memtable_whole_key_filtering = true;
    options.memtable_prefix_bloom_size_ratio = 0.02;
  }
  auto db = open_db(dir.str(), options);
  Gen gen(seed, key_space);
  Model model;
  uint64_t entries = 0;
  const std::string name = describe("differential", seed, label);
  check_db(*db, rocksdb::ReadOptions(), model, gen, name + " empty");
  for (int op = 1; op <= ops; ++op) {
    entries += random_write(*db, model, gen, name + " op " + std::to_string(op));
    if (op % check_every == 0 || op == ops) {
      std::string where = name + " after op " + std::to_string(op);
      BOOST_REQUIRE_EQUAL(int_property(*db, "rocksdb.num-entries-active-mem-table"), entries);
      BOOST_REQUIRE_EQUAL(int_property(*db, "rocksdb.num-immutable-mem-table"), 0u);
      BOOST_REQUIRE_EQUAL(sst_count(*db), 0u);
      check_db(*db, rocksdb::ReadOptions(), model, gen, where);
    }
  }
  BOOST_TEST_MESSAGE(name << ": " << ops << " writes, " << entries << " memtable entries, " << model.size()
                          << " live keys");
  close_db(db);
}

// Concatenates operands: "a", then "a,b", ...
class AppendOperator : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice& /*key*/, const rocksdb::Slice* existing, const rocksdb::Slice& value,
             std::string* new_value, rocksdb::Logger* /*logger*/) const override {
    new_value->clear();
    if (existing != nullptr) {
      new_value->assign(existing->data(), existing->size());
      new_value->push_back(',');
    }
    new_value->append(value.data(), value.size());
    return true;
  }
  const char* Name() const override { return "ZstoreTestAppend"; }
};

// Collects failures of other threads (Boost.Test checks are not thread safe)
// for the main thread to report.
class Failures {
 public:
  void add(const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++count_;
    if (first_.size() < 8) first_.push_back(what);
  }
  void require_none(const std::string& where) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string all;
    for (const auto& f : first_) all += "\n  " + f;
    BOOST_REQUIRE_MESSAGE(count_ == 0, where << ": " << count_ << " failures, first ones:" << all);
  }

 private:
  std::mutex mutex_;
  std::size_t count_ = 0;
  std::vector<std::string> first_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(sorted_runs_rep)

BOOST_AUTO_TEST_CASE(factory_reports_its_capabilities) {
  SortedRunsRepFactory factory;
  BOOST_CHECK(factory.IsInsertConcurrentlySupported());
  BOOST_CHECK(!factory.CanHandleDuplicatedKey());
  BOOST_CHECK_EQUAL(std::string(factory.Name()), "ZstoreSortedRunsRepFactory");
  BOOST_CHECK_EQUAL(SortedRunsRepFactory::kDefaultTailEntries, 256u);
}

// Empty memtable, then every size from 1 to 80 keys written in descending,
// ascending and random order: each number of runs the binary counter goes
// through, with the tail empty, partly full and full, including a tail
// size that is no power of two.
BOOST_AUTO_TEST_CASE(every_size_in_each_write_order) {
  for (std::size_t tail : {1u, 2u, 3u, 4u}) {
    for (int order = 0; order < 3; ++order) {
      TempDir dir;
      auto db = open_db(dir.str(), db_options(sorted_runs(tail)));
      std::vector<int> numbers(80);
      std::iota(numbers.begin(), numbers.end(), 1);
      if (order == 0) std::reverse(numbers.begin(), numbers.end());
      Gen gen(static_cast<uint32_t>(tail * 10 + order), 100);
      if (order == 2) std::shuffle(numbers.begin(), numbers.end(), gen.rng());
      Model model;
      const std::string name = "tail=" + std::to_string(tail) + " order=" + std::to_string(order);
      check_db(*db, rocksdb::ReadOptions(), model, gen, name + " empty", 8);
      for (std::size_t i = 0; i < numbers.size(); ++i) {
        std::string key = Gen::key_of(numbers[i]), value = gen.value();
        require_ok(db->Put(rocksdb::WriteOptions(), key, value), name + ": Put");
        model[key] = value;
        check_db(*db, rocksdb::ReadOptions(), model, gen, name + " size " + std::to_string(i + 1), 8);
      }
      // Every key again, newer versions over all the older runs.
      for (int n : numbers) {
        std::string key = Gen::key_of(n), value = gen.value();
        require_ok(db->Put(rocksdb::WriteOptions(), key, value), name + ": overwrite");
        model[key] = value;
      }
      check_db(*db, rocksdb::ReadOptions(), model, gen, name + " overwritten");
      close_db(db);
    }
  }
}

// Case 1: random writes against a model, reads of every kind checked on the
// way; small tails, the default tail, and the skip list as a control.
BOOST_AUTO_TEST_CASE(differential_small_tails) {
  uint32_t seed = 1001;
  for (std::size_t tail : {1u, 2u, 4u, 16u}) {
    differential(sorted_runs(tail), "tail=" + std::to_string(tail), seed++, 3000, 400, 250);
  }
  differential(sorted_runs(4), "tail=4 memtable bloom", seed++, 3000, 400, 250, true);
}

// The default tail compares inline with bytewise keys, and through
// RocksDB's KeyComparator for any other comparator.
BOOST_AUTO_TEST_CASE(differential_default_tail) {
  differential(sorted_runs(SortedRunsRepFactory::kDefaultTailEntries), "default tail", 2001, 6000, 1500, 1000);
  differential(sorted_runs(SortedRunsRepFactory::kDefaultTailEntries), "default tail memtable bloom", 2002, 6000, 1500,
               1000, true);
  differential(std::make_shared<SortedRunsRepFactory>(), "default tail, KeyComparator", 2003, 6000, 1500, 1000);
}

BOOST_AUTO_TEST_CASE(differential_skip_list_control) {
  for (uint32_t seed : {1001u, 1002u}) differential(skip_list(), "skip list", seed, 3000, 400, 250);
}

// Case 2: snapshots keep seeing their versions while keys are overwritten
// and deleted many times over (many versions of each user key in the
// memtable, newest first).
BOOST_AUTO_TEST_CASE(snapshots_see_old_versions) {
  for (std::size_t tail : {1u, 2u, 16u}) {
    const uint32_t seed = 3000 + static_cast<uint32_t>(tail);
    const std::string name = describe("snapshots", seed, "tail=" + std::to_string(tail));
    TempDir dir;
    auto db = open_db(dir.str(), db_options(sorted_runs(tail)));
    Gen gen(seed, 40);
    Model model;
    std::vector<std::pair<const rocksdb::Snapshot*, Model>> snapshots;
    for (int op = 1; op <= 2400; ++op) {
      random_write(*db, model, gen, name + " op " + std::to_string(op));
      if (op % 150 == 0) snapshots.emplace_back(db->GetSnapshot(), model);
      if (op % 600 == 0) {
        for (std::size_t i = 0; i < snapshots.size(); ++i) {
          rocksdb::ReadOptions ro;
          ro.snapshot = snapshots[i].first;
          check_db(*db, ro, snapshots[i].second, gen,
                   name + " op " + std::to_string(op) + " snapshot " + std::to_string(i), 20);
        }
        // Release one at random: the others must not be disturbed.
        std::size_t victim = static_cast<std::size_t>(gen.uniform(0, static_cast<int>(snapshots.size()) - 1));
        db->ReleaseSnapshot(snapshots[victim].first);
        snapshots.erase(snapshots.begin() + static_cast<long>(victim));
      }
    }
    check_db(*db, rocksdb::ReadOptions(), model, gen, name + " latest");
    for (std::size_t i = 0; i < snapshots.size(); ++i) {
      rocksdb::ReadOptions ro;
      ro.snapshot = snapshots[i].first;
      check_db(*db, ro, snapshots[i].second, gen, name + " final snapshot " + std::to_string(i));
    }
    BOOST_REQUIRE_EQUAL(sst_count(*db), 0u);
    for (auto& [snapshot, unused] : snapshots) db->ReleaseSnapshot(snapshot);
    close_db(db);
  }
}

// A snapshot of one key overwritten in every write: each snapshot must find
// exactly its version among hundreds of versions of the key.
BOOST_AUTO_TEST_CASE(snapshots_of_one_hot_key) {
  for (std::size_t tail : {1u, 4u}) {
    TempDir dir;
    auto db = open_db(dir.str(), db_options(sorted_runs(tail)));
    std::vector<const rocksdb::Snapshot*> snapshots;
    for (int i = 0; i < 500; ++i) {
      if (i % 7 == 3) {
        require_ok(db->Delete(rocksdb::WriteOptions(), "hot"), "Delete");
      } else {
        require_ok(db->Put(rocksdb::WriteOptions(), "hot", "v" + std::to_string(i)), "Put");
      }
      require_ok(db->Put(rocksdb::WriteOptions(), "hot" + std::to_string(i % 13), "x"), "Put neighbour");
      snapshots.push_back(db->GetSnapshot());
    }
    for (int i = 0; i < 500; ++i) {
      rocksdb::ReadOptions ro;
      ro.snapshot = snapshots[i];
      std::string value;
      rocksdb::Status s = db->Get(ro, "hot", &value);
      std::string where = "tail=" + std::to_string(tail) + " snapshot after write " + std::to_string(i);
      if (i % 7 == 3) {
        BOOST_REQUIRE_MESSAGE(s.IsNotFound(), where << ": " << s.ToString() << " " << value);
      } else {
        require_ok(s, where);
        BOOST_REQUIRE_EQUAL(value, "v" + std::to_string(i));
      }
      std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro));
      it->Seek("hot");
      BOOST_REQUIRE(it->Valid());
      if (i % 7 == 3) {
        BOOST_REQUIRE_NE(it->key().ToString(), "hot");
      } else {
        BOOST_REQUIRE_EQUAL(it->key().ToString(), "hot");
        BOOST_REQUIRE_EQUAL(it->value().ToString(), "v" + std::to_string(i));
      }
      it->SeekForPrev("hot");
      if (i % 7 == 3) {
        BOOST_REQUIRE(!it->Valid());
      } else {
        BOOST_REQUIRE(it->Valid());
        BOOST_REQUIRE_EQUAL(it->value().ToString(), "v" + std::to_string(i));
      }
    }
    for (auto* snapshot : snapshots) db->ReleaseSnapshot(snapshot);
    close_db(db);
  }
}

// Merge operands of one key are collected from the memtable newest first
// down to a Put or Delete: the concatenation shows any version out of
// order, missing or repeated.
BOOST_AUTO_TEST_CASE(merge_operands_in_order) {
  for (std::size_t tail : {1u, 2u, 4u, 16u}) {
    const uint32_t seed = 4000 + static_cast<uint32_t>(tail);
    const std::string name = describe("merge", seed, "tail=" + std::to_string(tail));
    TempDir dir;
    rocksdb::Options options = db_options(sorted_runs(tail));
    options.merge_operator = std::make_shared<AppendOperator>();
    auto db = open_db(dir.str(), options);
    Gen gen(seed, 30);
    Model model;
    std::vector<std::pair<const rocksdb::Snapshot*, Model>> snapshots;
    for (int op = 1; op <= 1500; ++op) {
      std::string key = gen.key();
      int dice = gen.uniform(0, 99);
      if (dice < 70) {
        std::string operand = "m" + std::to_string(op);
        require_ok(db->Merge(rocksdb::WriteOptions(), key, operand), name + ": Merge");
        auto found = model.find(key);
        if (found == model.end()) {
          model[key] = operand;
        } else {
          found->second += "," + operand;
        }
      } else if (dice < 85) {
        std::string value = "p" + std::to_string(op);
        require_ok(db->Put(rocksdb::WriteOptions(), key, value), name + ": Put");
        model[key] = value;
      } else {
        require_ok(db->Delete(rocksdb::WriteOptions(), key), name + ": Delete");
        model.erase(key);
      }
      if (op % 300 == 0) {
        snapshots.emplace_back(db->GetSnapshot(), model);
        check_db(*db, rocksdb::ReadOptions(), model, gen, name + " op " + std::to_string(op), 20);
      }
    }
    for (std::size_t i = 0; i < snapshots.size(); ++i) {
      rocksdb::ReadOptions ro;
      ro.snapshot = snapshots[i].first;
      check_db(*db, ro, snapshots[i].second, gen, name + " snapshot " + std::to_string(i), 20);
    }
    for (auto& [snapshot, unused] : snapshots) db->ReleaseSnapshot(snapshot);
    BOOST_REQUIRE_EQUAL(sst_count(*db), 0u);
    // The flush merges the same operands through the memtable's iterator.
    require_ok(db->Flush(rocksdb::FlushOptions()), name + ": Flush");
    check_db(*db, rocksdb::ReadOptions(), model, gen, name + " flushed", 20);
    close_db(db);
  }
}

// Case 3: an iterator keeps the view of its creation while writes go on,
// read after the writes, and also stepped between writes.
BOOST_AUTO_TEST_CASE(iterator_keeps_its_view_during_writes) {
  for (std::size_t tail : {1u, 4u, 16u}) {
    const uint32_t seed = 5000 + static_cast<uint32_t>(tail);
    const std::string name = describe("iterator view", seed, "tail=" + std::to_string(tail));
    TempDir dir;
    auto db = open_db(dir.str(), db_options(sorted_runs(tail)));
    Gen gen(seed, 600);
    Model model;
    for (int op = 0; op < 1500; ++op) random_write(*db, model, gen, name + " setup");
    const Entries before = entries_of(model);
    BOOST_REQUIRE(before.size() > 50);

    std::unique_ptr<rocksdb::Iterator> whole(db->NewIterator(rocksdb::ReadOptions()));
    std::unique_ptr<rocksdb::Iterator> halfway(db->NewIterator(rocksdb::ReadOptions()));
    const long middle = static_cast<long>(before.size() / 2);
    halfway->Seek(before[middle].first);
    require_at(*halfway, before, middle, name + ": halfway Seek");
    for (int i = 0; i < 5; ++i) halfway->Next();
    require_at(*halfway, before, middle + 5, name + ": halfway before writes");

    // 1000 more keys: overwrites and deletes of present keys, new keys
    // between and around them.
    for (int i = 0; i < 1000; ++i) {
      int dice = gen.uniform(0, 9);
      const std::string& present = before[gen.uniform(0, static_cast<int>(before.size()) - 1)].first;
      std::string key = dice < 4 ? present : dice < 6 ? present + "+" : gen.target();
      if (dice == 9) {
        require_ok(db->Delete(rocksdb::WriteOptions(), key), name + ": later Delete");
        model.erase(key);
      } else {
        std::string value = gen.value();
        require_ok(db->Put(rocksdb::WriteOptions(), key, value), name + ": later Put");
        model[key] = value;
      }
    }

    Entries got;
    for (whole->SeekToFirst(); whole->Valid(); whole->Next())
      got.emplace_back(whole->key().ToString(), whole->value().ToString());
    require_ok(whole->status(), name + ": old iterator forward");
    require_same(got, before, name + ": old iterator forward");
    got.clear();
    for (whole->SeekToLast(); whole->Valid(); whole->Prev())
      got.emplace_back(whole->key().ToString(), whole->value().ToString());
    require_ok(whole->status(), name + ": old iterator backward");
    std::reverse(got.begin(), got.end());
    require_same(got, before, name + ": old iterator backward");
    for (int i = 0; i < 40; ++i) {
      std::string target = gen.target();
      whole->Seek(target);
      long idx = lower_index(before, target);
      require_at(*whole, before, idx, name + ": old iterator Seek " + printable(target));
      walk(*whole, before, idx, gen, name + ": old iterator Seek " + printable(target));
      whole->SeekForPrev(target);
      idx = upper_index(before, target) - 1;
      require_at(*whole, before, idx, name + ": old iterator SeekForPrev " + printable(target));
      walk(*whole, before, idx, gen, name + ": old iterator SeekForPrev " + printable(target));
    }

    // The one positioned before the writes goes on where it stood.
    long idx = middle + 5;
    for (halfway->Next(), ++idx; halfway->Valid(); halfway->Next(), ++idx) {
      require_at(*halfway, before, idx, name + ": halfway continues");
    }
    require_at(*halfway, before, idx, name + ": halfway at the end");

    // Stepped between writes, the writes landing right around the position.
    const Entries now = entries_of(model);
    std::unique_ptr<rocksdb::Iterator> stepped(db->NewIterator(rocksdb::ReadOptions()));
    stepped->SeekToFirst();
    idx = 0;
    bool forward = true;
    for (int step = 0; step < 3000 && stepped->Valid(); ++step) {
      require_at(*stepped, now, idx, name + ": stepped, step " + std::to_string(step));
      std::string here = stepped->key().ToString();
      for (const std::string& key :
           {here + "+", here, here.empty() ? std::string() : here.substr(0, here.size() - 1), gen.key()}) {
        std::string value = gen.value();
        require_ok(db->Put(rocksdb::WriteOptions(), key, value), name + ": stepped Put");
        model[key] = value;
      }
      if (gen.chance(10)) forward = !forward;
      if (forward) {
        stepped->Next();
        ++idx;
      } else {
        stepped->Prev();
        --idx;
      }
    }
    require_at(*stepped, now, idx, name + ": stepped at the end");

    whole.reset();
    halfway.reset();
    stepped.reset();
    check_db(*db, rocksdb::ReadOptions(), model, gen, name + " after all writes");
    BOOST_REQUIRE_EQUAL(sst_count(*db), 0u);
    close_db(db);
  }
}

// Case 4: two readers Get keys the writer reports written and scan the
// whole memtable, in order, while the writer goes on.
BOOST_AUTO_TEST_CASE(concurrent_readers_during_writes) {
  for (std::size_t tail : {4u, 64u}) {
    TempDir dir;
    auto db = open_db(dir.str(), db_options(sorted_runs(tail)));
    const int kKeys = 20000;
    std::vector<int> order(kKeys);
    std::iota(order.begin(), order.end(), 0);
    std::mt19937 rng(6000 + static_cast<uint32_t>(tail));
    std::shuffle(order.begin(), order.end(), rng);
    auto key_of = [](int n) { return "r" + std::to_string(n); };
    auto value_of = [](int n) { return "value-" + std::to_string(n * 7 + 1); };

    std::atomic<int> written{0};
    std::atomic<bool> done{false};
    std::atomic<int> readers_started{0};
    std::atomic<long> reads_during_writes{0};
    std::atomic<long> scans_during_writes{0};
    Failures failures;
    const int kReaders = 2;

    std::thread writer([&] {
      while (readers_started.load() < kReaders) std::this_thread::yield();
      rocksdb::WriteOptions wo;
      wo.disableWAL = true;
      for (int i = 0; i < kKeys; ++i) {
        rocksdb::Status s = db->Put(wo, key_of(order[i]), value_of(order[i]));
        if (!s.ok()) failures.add("Put: " + s.ToString());
        written.store(i + 1, std::memory_order_release);
      }
      done.store(true);
    });

    auto scan = [&](const std::string& who, int& count) {
      std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
      std::string previous;
      count = 0;
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        std::string key = it->key().ToString();
        if (count > 0 && !(previous < key)) {
          failures.add(who + ": scan " + printable(previous) + " then " + printable(key));
          return;
        }
        int n = std::stoi(key.substr(1));
        if (it->value().ToString() != value_of(n)) failures.add(who + ": scan " + key + " has a wrong value");
        previous = std::move(key);
        ++count;
      }
      if (!it->status().ok()) failures.add(who + ": scan " + it->status().ToString());
    };

    std::vector<std::thread> readers;
    for (int r = 0; r < kReaders; ++r) {
      readers.emplace_back([&, r] {
        const std::string who = "reader " + std::to_string(r);
        std::mt19937 reader_rng(static_cast<uint32_t>(r + 1));
        readers_started.fetch_add(1);
        for (long round = 0; round < 5'000'000 && !done.load(); ++round) {
          if (round % 500 == 499) {
            int before = written.load(std::memory_order_acquire);
            int count = 0;
            scan(who, count);
            if (count < before || count > kKeys) {
              failures.add(who + ": scan of " + std::to_string(count) + " keys, " + std::to_string(before) +
                           " were written before it");
            }
            scans_during_writes.fetch_add(1);
            continue;
          }
          int w = written.load(std::memory_order_acquire);
          if (w == 0) continue;
          int n = order[std::uniform_int_distribution<int>(0, w - 1)(reader_rng)];
          std::string value;
          rocksdb::Status s = db->Get(rocksdb::ReadOptions(), key_of(n), &value);
          if (!s.ok() || value != value_of(n)) {
            failures.add(who + ": Get " + key_of(n) + " (written) gave " + s.ToString() + " " + printable(value));
          }
          reads_during_writes.fetch_add(1, std::memory_order_relaxed);
        }
      });
    }
    writer.join();
    for (auto& reader : readers) reader.join();
    // After every write (a reader's bounded loop may end before the writer
    // has written anything): the whole memtable, in order.
    int count = 0;
    scan("final", count);
    if (count != kKeys) failures.add("final scan of " + std::to_string(count) + " keys");
    failures.require_none("tail=" + std::to_string(tail));
    BOOST_TEST_MESSAGE("tail=" << tail << ": " << reads_during_writes.load() << " Gets and "
                               << scans_during_writes.load() << " scans during the writes");
    BOOST_REQUIRE_EQUAL(int_property(*db, "rocksdb.num-entries-active-mem-table"), static_cast<uint64_t>(kKeys));
    close_db(db);
  }
}

// Case 5: the memtable flushed through its iterator, then reopened with the
// same representation and with the skip list; and small write buffers, so
// that many memtables are filled, made immutable, merged by two and flushed
// while the writes go on.
BOOST_AUTO_TEST_CASE(flush_and_reopen) {
  const uint32_t seed = 7001;
  const std::string name = describe("flush", seed, "tail=2");
  TempDir dir;
  auto db = open_db(dir.str(), db_options(sorted_runs(2)));
  Gen gen(seed, 500);
  Model model;
  for (int op = 1; op <= 3000; ++op) random_write(*db, model, gen, name + " op " + std::to_string(op));
  check_db(*db, rocksdb::ReadOptions(), model, gen, name + " before flush");
  require_ok(db->Flush(rocksdb::FlushOptions()), name + ": Flush");
  BOOST_REQUIRE_EQUAL(int_property(*db, "rocksdb.num-entries-active-mem-table"), 0u);
  BOOST_REQUIRE_GE(sst_count(*db), 1u);
  check_db(*db, rocksdb::ReadOptions(), model, gen, name + " flushed");
  close_db(db);

  db = open_db(dir.str(), db_options(sorted_runs(2)));
  check_db(*db, rocksdb::ReadOptions(), model, gen, name + " reopened");
  // Newer versions and deletes in the memtable over the flushed ones.
  for (int op = 1; op <= 1500; ++op) random_write(*db, model, gen, name + " more op " + std::to_string(op));
  BOOST_REQUIRE_GT(int_property(*db, "rocksdb.num-entries-active-mem-table"), 0u);
  check_db(*db, rocksdb::ReadOptions(), model, gen, name + " memtable over SST");
  require_ok(db->Flush(rocksdb::FlushOptions()), name + ": second Flush");
  close_db(db);

  db = open_db(dir.str(), db_options(skip_list()));
  check_db(*db, rocksdb::ReadOptions(), model, gen, name + " reopened with the skip list");
  close_db(db);
}

BOOST_AUTO_TEST_CASE(small_write_buffers_flush_during_writes) {
  for (std::size_t tail : {std::size_t{4}, SortedRunsRepFactory::kDefaultTailEntries}) {
    const uint32_t seed = 7100 + static_cast<uint32_t>(tail);
    const std::string name = describe("small buffers", seed, "tail=" + std::to_string(tail));
    TempDir dir;
    rocksdb::Options options = db_options(sorted_runs(tail), 64 << 10);
    options.min_write_buffer_number_to_merge = 2;
    options.max_write_buffer_number = 4;
    auto db = open_db(dir.str(), options);
    Gen gen(seed, 4000);
    Model model;
    uint64_t most_immutable = 0;
    for (int op = 1; op <= 12000; ++op) {
      random_write(*db, model, gen, name + " op " + std::to_string(op), 40, 160);
      if (op % 50 == 0) {
        most_immutable = std::max(most_immutable, int_property(*db, "rocksdb.num-immutable-mem-table"));
      }
      if (op % 3000 == 0) check_db(*db, rocksdb::ReadOptions(), model, gen, name + " op " + std::to_string(op), 20);
    }
    check_db(*db, rocksdb::ReadOptions(), model, gen, name + " end");
    std::size_t files = sst_count(*db);
    BOOST_TEST_MESSAGE(name << ": up to " << most_immutable << " immutable memtables, " << files << " SST files");
    BOOST_REQUIRE_GE(most_immutable, 1u);
    BOOST_REQUIRE_GE(files, 1u);
    close_db(db);

    db = open_db(dir.str(), options);
    check_db(*db, rocksdb::ReadOptions(), model, gen, name + " reopened");
    close_db(db);
  }
}

// Case 6: the memtable rebuilt from the WAL through the factory, kept in
// memory (avoid_flush_during_recovery), then flushed by the recovery.
BOOST_AUTO_TEST_CASE(wal_recovery) {
  for (std::size_t tail : {1u, 8u}) {
    const uint32_t seed = 8000 + static_cast<uint32_t>(tail);
    const std::string name = describe("WAL", seed, "tail=" + std::to_string(tail));
    TempDir dir;
    rocksdb::Options options = db_options(sorted_runs(tail));
    options.avoid_flush_during_shutdown = true;
    auto db = open_db(dir.str(), options);
    Gen gen(seed, 500);
    Model model;
    uint64_t entries = 0;
    for (int op = 1; op <= 2500; ++op) entries += random_write(*db, model, gen, name + " op " + std::to_string(op));
    close_db(db);

    rocksdb::Options keep = options;
    keep.avoid_flush_during_recovery = true;
    db = open_db(dir.str(), keep);
    BOOST_REQUIRE_EQUAL(sst_count(*db), 0u);
    BOOST_REQUIRE_EQUAL(int_property(*db, "rocksdb.num-entries-active-mem-table"), entries);
    check_db(*db, rocksdb::ReadOptions(), model, gen, name + " recovered into the memtable");
    for (int op = 1; op <= 1000; ++op) random_write(*db, model, gen, name + " more op " + std::to_string(op));
    check_db(*db, rocksdb::ReadOptions(), model, gen, name + " recovered plus more");
    close_db(db);

    db = open_db(dir.str(), options);
    check_db(*db, rocksdb::ReadOptions(), model, gen, name + " recovered and flushed");
    BOOST_TEST_MESSAGE(name << ": " << sst_count(*db) << " SST files after the second recovery");
    close_db(db);
  }
}

// Case 7: several threads write disjoint keys at once; RocksDB inserts the
// batches of a write group into the memtable concurrently.
BOOST_AUTO_TEST_CASE(concurrent_memtable_writes) {
  for (std::size_t tail : {std::size_t{1}, std::size_t{4}, SortedRunsRepFactory::kDefaultTailEntries}) {
    const std::string name = "concurrent writes tail=" + std::to_string(tail);
    TempDir dir;
    rocksdb::Options options = db_options(sorted_runs(tail));
    BOOST_REQUIRE(options.allow_concurrent_memtable_write);
    auto db = open_db(dir.str(), options);
    const int kThreads = 4;
    const int kKeysPerThread = 3000;
    std::vector<Model> models(kThreads);
    std::vector<uint64_t> entries(kThreads, 0);
    Failures failures;
    std::atomic<int> ready{0};
    std::atomic<int> writers_done{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        std::mt19937 rng(9000 + static_cast<uint32_t>(t * 31 + tail));
        std::vector<int> order(kKeysPerThread);
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), rng);
        auto key_of = [t](int n) { return "w" + std::to_string(n) + "/" + std::to_string(t); };
        ready.fetch_add(1);
        while (ready.load() < kThreads) std::this_thread::yield();
        rocksdb::WriteOptions wo;
        wo.disableWAL = (t % 2 == 0);
        for (int i = 0; i < kKeysPerThread;) {
          if (rng() % 2 == 0) {
            std::string key = key_of(order[i]), value = "s" + std::to_string(i) + "." + std::to_string(t);
            rocksdb::Status s = db->Put(wo, key, value);
            if (!s.ok()) failures.add("Put: " + s.ToString());
            models[t][key] = value;
            ++entries[t];
            ++i;
          } else {
            rocksdb::WriteBatch batch;
            for (int j = 0; j < 4 && i < kKeysPerThread; ++j, ++i) {
              std::string key = key_of(order[i]), value = "b" + std::to_string(i) + "." + std::to_string(t);
              batch.Put(key, value);
              models[t][key] = value;
              ++entries[t];
              if (i > 10 && rng() % 8 == 0) {
                // Rewrite or delete one of the thread's earlier keys.
                std::string old = key_of(order[rng() % i]);
                if (rng() % 2 == 0) {
                  batch.Delete(old);
                  models[t].erase(old);
                } else {
                  batch.Put(old, "again" + std::to_string(i));
                  models[t][old] = "again" + std::to_string(i);
                }
                ++entries[t];
              }
            }
            rocksdb::Status s = db->Write(wo, &batch);
            if (!s.ok()) failures.add("Write: " + s.ToString());
          }
        }
        writers_done.fetch_add(1);
      });
    }
    // A reader scanning meanwhile: keys strictly ascending.
    threads.emplace_back([&] {
      for (int round = 0; round < 1000 && writers_done.load() < kThreads; ++round) {
        std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
        std::string previous;
        bool first = true;
        for (it->SeekToFirst(); it->Valid(); it->Next()) {
          std::string key = it->key().ToString();
          if (!first && !(previous < key)) {
            failures.add("scan " + printable(previous) + " then " + printable(key));
            return;
          }
          first = false;
          previous = std::move(key);
        }
        if (!it->status().ok()) failures.add("scan: " + it->status().ToString());
      }
    });
    for (auto& thread : threads) thread.join();
    failures.require_none(name);

    Model model;
    uint64_t total = 0;
    for (int t = 0; t < kThreads; ++t) {
      model.insert(models[t].begin(), models[t].end());
      total += entries[t];
    }
    BOOST_REQUIRE_EQUAL(int_property(*db, "rocksdb.num-entries-active-mem-table"), total);
    Gen gen(9100, 100);
    const Entries want = entries_of(model);
    require_same(scan_forward(*db, rocksdb::ReadOptions(), name), want, name + ": forward scan");
    require_same(scan_backward(*db, rocksdb::ReadOptions(), name), want, name + ": backward scan");
    for (int t = 0; t < kThreads; ++t) {
      for (int n = 0; n < kKeysPerThread; ++n) {
        std::string key = "w" + std::to_string(n) + "/" + std::to_string(t), value;
        rocksdb::Status s = db->Get(rocksdb::ReadOptions(), key, &value);
        auto found = model.find(key);
        bool ok = found == model.end() ? s.IsNotFound() : s.ok() && value == found->second;
        if (!ok) BOOST_FAIL(name << ": Get " << key << " gave " << s.ToString() << " " << printable(value));
      }
    }
    check_db(*db, rocksdb::ReadOptions(), model, gen, name + " written");
    require_ok(db->Flush(rocksdb::FlushOptions()), name + ": Flush");
    check_db(*db, rocksdb::ReadOptions(), model, gen, name + " flushed");
    close_db(db);
  }
}

// RocksDB's memtable statistics of a key range count exactly the entries
// in that range, every version of a rewritten key included.
BOOST_AUTO_TEST_CASE(memtable_stats_count_the_entries_of_a_range) {
  TempDir dir;
  auto db = open_db(dir.str(), db_options(sorted_runs(4)));
  auto key = [](int i) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "k%05d", i);
    return std::string(buf);
  };
  std::mt19937 rng(7);
  std::vector<int> order(300);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  for (int i : order) require_ok(db->Put(rocksdb::WriteOptions(), key(i), "v"), "put");
  for (int i = 100; i < 150; ++i) require_ok(db->Put(rocksdb::WriteOptions(), key(i), "w"), "rewrite");
  auto count = [&](int from, int to) {
    std::string a = key(from);
    std::string b = key(to);
    uint64_t entries = 0;
    uint64_t bytes = 0;
    db->GetApproximateMemTableStats(db->DefaultColumnFamily(), rocksdb::Range(a, b), &entries, &bytes);
    return entries;
  };
  BOOST_CHECK_EQUAL(count(0, 300), 350u);
  BOOST_CHECK_EQUAL(count(0, 100), 100u);
  BOOST_CHECK_EQUAL(count(100, 150), 100u);
  BOOST_CHECK_EQUAL(count(290, 300), 10u);
  BOOST_CHECK_EQUAL(count(300, 400), 0u);
}

// Heap bytes in use by the process (the sanitizer's count under ASan).
std::size_t heap_in_use() {
#if defined(__SANITIZE_ADDRESS__)
  return __sanitizer_get_current_allocated_bytes();
#else
  return mallinfo2().uordblks;
#endif
}

// Gets and iterators keep no memory once done: the representation builds
// its iterators in its own slots (RocksDB destroys them in place) and a
// Get's in a slot of its thread (RocksDB 7.8 never destroys that one), so
// neither grows with the number of reads. A heap iterator per Get would
// keep about 150 bytes each here: 15 MB.
BOOST_AUTO_TEST_CASE(gets_and_iterators_keep_no_memory) {
  TempDir dir;
  auto db = open_db(dir.str(), db_options(sorted_runs(64)));
  for (int i = 0; i < 1000; ++i) require_ok(db->Put(rocksdb::WriteOptions(), "k" + std::to_string(i), "v"), "put");
  auto reads = [&](int n) {
    std::string value;
    for (int i = 0; i < n; ++i) {
      require_ok(db->Get(rocksdb::ReadOptions(), "k" + std::to_string(i % 1000), &value), "get");
      if (i % 5 == 0) {
        std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
        it->Seek("k5");
        BOOST_REQUIRE(it->Valid());
      }
    }
  };
  reads(1000);  // RocksDB's own caches and the slots settle
  std::size_t before = heap_in_use();
  reads(100000);
  std::size_t after = heap_in_use();
  BOOST_TEST_MESSAGE("heap in use " << before << " -> " << after << " bytes over 100000 Gets");
  BOOST_CHECK_LT(after, before + (std::size_t{1} << 20));
  close_db(db);
}

// The iterator a Get leaves in its thread's slot (RocksDB 7.8) holds a view
// of runs only: destroyed by a Get on another database after the first
// database and its memtables are gone, it reads nothing freed (ASan).
BOOST_AUTO_TEST_CASE(a_get_after_the_last_memtable_is_gone_reads_nothing_freed) {
  std::string value;
  {
    TempDir dir;
    auto db = open_db(dir.str(), db_options(sorted_runs(4)));
    for (int i = 0; i < 50; ++i) require_ok(db->Put(rocksdb::WriteOptions(), "a" + std::to_string(i), "v"), "put");
    require_ok(db->Get(rocksdb::ReadOptions(), "a7", &value), "get a7");
    close_db(db);
  }
  TempDir dir;
  auto db = open_db(dir.str(), db_options(sorted_runs(4)));
  require_ok(db->Put(rocksdb::WriteOptions(), "b", "w"), "put b");
  require_ok(db->Get(rocksdb::ReadOptions(), "b", &value), "get b");
  BOOST_CHECK_EQUAL(value, "w");
  close_db(db);
}

BOOST_AUTO_TEST_SUITE_END()
