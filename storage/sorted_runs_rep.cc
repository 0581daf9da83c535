// SortedRunsRepFactory (sorted_runs_rep.h): a memtable as a sorted tail and
// immutable sorted runs, merged like a binary counter.
#include "storage/sorted_runs_rep.h"

#include <rocksdb/comparator.h>
#include <rocksdb/slice.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "storage/bytewise.h"

namespace rocksdb {
// RocksDB hands GetIterator the arena of the iterator's owner and destroys
// the iterator in place without freeing it, so it must be built in that
// arena. Arena (memory/arena.h) is not among the installed headers; its
// allocation is an exported member function, which the linker checks.
class Arena {
 public:
  char* AllocateAligned(size_t bytes, size_t huge_page_size, Logger* logger);
};
}  // namespace rocksdb

// MemTableRep::Get's default builds an iterator and never frees it (RocksDB
// 7.8), so the representation answers Gets itself, and needs the key a
// LookupKey (db/dbformat.h, not installed) holds: its first members point
// at the length-prefixed memtable key, the internal key and their end.
// Checked against RocksDB's version here and against the key at each Get.
#include <rocksdb/version.h>
static_assert(ROCKSDB_MAJOR == 7 && ROCKSDB_MINOR == 8, "check LookupKeyView against db/dbformat.h of this RocksDB");

namespace zstore::storage {
namespace {

using Entry = const char*;
using Run = std::vector<Entry>;
using RunPtr = std::shared_ptr<const Run>;
using KeyComparator = rocksdb::MemTableRep::KeyComparator;

struct LookupKeyView {
  const char* start;   // varint32 length, then the internal key
  const char* kstart;  // the internal key: user key, 8-byte sequence and type
  const char* end;
};

// The internal key of k (see LookupKeyView above); aborts if k is not laid
// out as expected rather than reading past it.
rocksdb::Slice lookup_internal_key(const rocksdb::LookupKey& k) {
  const auto* view = reinterpret_cast<const LookupKeyView*>(&k);
  rocksdb::Slice internal(view->kstart, static_cast<std::size_t>(view->end - view->kstart));
  rocksdb::Slice prefixed = rocksdb::GetLengthPrefixedSlice(view->start);
  if (view->start >= view->kstart || view->kstart + 8 > view->end || prefixed.data() != view->kstart ||
      prefixed.size() != internal.size()) {
    std::fprintf(stderr, "zstore: RocksDB's LookupKey is not laid out as sorted_runs_rep.cc expects\n");
    std::abort();
  }
  return internal;
}

// How far ahead a merge or an iteration asks for the entries it will
// compare next: entries lie at random places in the memtable's arena.
constexpr std::ptrdiff_t kPrefetchAhead = 8;
// A merge compares keys (an entry's first cache line); an iteration (a
// flush) reads the entry's key and value too: an entry of a 16-byte CHP
// key and a 100-byte value spans three lines or four.
constexpr int kMergeLines = 1;
constexpr int kIterationLines = 3;

// Asks for the first `lines` cache lines of run[i], if there is one.
// Always inlined: GCC 12 finds a function that only prefetches free of side
// effects and deletes the calls to it (from the twelfth pass until this was
// seen, no merge or iteration here prefetched anything).
[[gnu::always_inline]] inline void prefetch(const Run& run, std::ptrdiff_t i, int lines) {
  if (i < 0 || static_cast<std::size_t>(i) >= run.size()) return;
  const char* entry = run[static_cast<std::size_t>(i)];
  for (int line = 0; line < lines; ++line) __builtin_prefetch(entry + 64 * line);
}

// Compares entries (length-prefixed internal keys) with each other or with
// an internal key, as RocksDB's memtable KeyComparator does: user keys in
// the column family's order, then sequences, newest first. With bytewise
// user keys it compares inline (compare_bytes and a load), not through the
// KeyComparator's virtual calls and the user comparator's: a flush or a
// merge compares each entry several times.
class EntryCompare {
 public:
  EntryCompare(const KeyComparator& cmp, bool bytewise) : cmp_(&cmp), bytewise_(bytewise) {}
  int operator()(Entry a, Entry b) const { return bytewise_ ? bytewise(prefixed(a), prefixed(b)) : (*cmp_)(a, b); }
  int operator()(Entry a, const rocksdb::Slice& b) const { return bytewise_ ? bytewise(prefixed(a), b) : (*cmp_)(a, b); }

 private:
  static rocksdb::Slice prefixed(Entry e) {
    auto first = static_cast<unsigned char>(e[0]);
    if (first < 0x80) return rocksdb::Slice(e + 1, first);  // a length below 128: one byte
    return rocksdb::GetLengthPrefixedSlice(e);
  }
  // The sequence of an internal key: the 8-byte little-endian trailer
  // (sequence << 8 | type), without the type.
  static std::uint64_t sequence(const rocksdb::Slice& ikey) {
    const auto* p = reinterpret_cast<const unsigned char*>(ikey.data() + ikey.size() - 8);
    std::uint64_t trailer = 0;
    for (int i = 7; i >= 0; --i) trailer = (trailer << 8) | p[i];
    return trailer >> 8;
  }
  static int bytewise(const rocksdb::Slice& a, const rocksdb::Slice& b) {
    std::size_t ua = a.size() - 8;
    std::size_t ub = b.size() - 8;
    int r = compare_bytes(a.data(), ua, b.data(), ub);
    if (r != 0) return r;
    std::uint64_t sa = sequence(a);
    std::uint64_t sb = sequence(b);
    return sa > sb ? -1 : (sa < sb ? 1 : 0);
  }

  const KeyComparator* cmp_;
  bool bytewise_;
};

// The internal key a Seek targets: RocksDB passes the length-prefixed
// memtable key when it has one, else only the internal key.
rocksdb::Slice seek_target(const rocksdb::Slice& internal_key, const char* memtable_key) {
  return memtable_key != nullptr ? rocksdb::GetLengthPrefixedSlice(memtable_key) : internal_key;
}

// The first entry of run not before target.
std::ptrdiff_t lower_bound(const Run& run, const EntryCompare& cmp, const rocksdb::Slice& target) {
  auto at = std::partition_point(run.begin(), run.end(), [&](Entry e) { return cmp(e, target) < 0; });
  return at - run.begin();
}

// The first entry of run after target.
std::ptrdiff_t upper_bound(const Run& run, const EntryCompare& cmp, const rocksdb::Slice& target) {
  auto at = std::partition_point(run.begin(), run.end(), [&](Entry e) { return cmp(e, target) <= 0; });
  return at - run.begin();
}

// a and b (each sorted, no entry in both) as one sorted run.
RunPtr merge_runs(const Run& a, const Run& b, const EntryCompare& cmp) {
  auto out = std::make_shared<Run>();
  out->reserve(a.size() + b.size());
  for (std::ptrdiff_t k = 0; k < kPrefetchAhead; ++k) {
    prefetch(a, k, kMergeLines);
    prefetch(b, k, kMergeLines);
  }
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (cmp(b[j], a[i]) < 0) {
      out->push_back(b[j++]);
      prefetch(b, static_cast<std::ptrdiff_t>(j) + kPrefetchAhead, kMergeLines);
    } else {
      out->push_back(a[i++]);
      prefetch(a, static_cast<std::ptrdiff_t>(i) + kPrefetchAhead, kMergeLines);
    }
  }
  out->insert(out->end(), a.begin() + static_cast<std::ptrdiff_t>(i), a.end());
  out->insert(out->end(), b.begin() + static_cast<std::ptrdiff_t>(j), b.end());
  return out;
}

// The runs of one view merged on the fly. No entry is in two runs (an
// entry's internal key holds its unique sequence number), which keeps the
// turns between directions simple.
class MergedIterator final : public rocksdb::MemTableRep::Iterator {
 public:
  MergedIterator(const EntryCompare& cmp, std::vector<RunPtr> runs)
      : cmp_(cmp), runs_(std::move(runs)), pos_(runs_.size(), 0) {}

  bool Valid() const override { return current_ >= 0; }
  const char* key() const override { return at(current_); }

  void Next() override {
    if (!forward_) {
      // Each other run is at its last entry before the current one.
      for (std::size_t r = 0; r < runs_.size(); ++r) {
        if (static_cast<std::ptrdiff_t>(r) != current_) ++pos_[r];
      }
      forward_ = true;
    }
    prefetch(*runs_[current_], ++pos_[current_] + kPrefetchAhead, kIterationLines);
    pick_smallest();
  }

  void Prev() override {
    if (forward_) {
      // Each other run is at its first entry after the current one.
      for (std::size_t r = 0; r < runs_.size(); ++r) {
        if (static_cast<std::ptrdiff_t>(r) != current_) --pos_[r];
      }
      forward_ = false;
    }
    prefetch(*runs_[current_], --pos_[current_] - kPrefetchAhead, kIterationLines);
    pick_largest();
  }

  void Seek(const rocksdb::Slice& internal_key, const char* memtable_key) override {
    rocksdb::Slice target = seek_target(internal_key, memtable_key);
    for (std::size_t r = 0; r < runs_.size(); ++r) pos_[r] = lower_bound(*runs_[r], cmp_, target);
    forward_ = true;
    pick_smallest();
  }

  void SeekForPrev(const rocksdb::Slice& internal_key, const char* memtable_key) override {
    rocksdb::Slice target = seek_target(internal_key, memtable_key);
    for (std::size_t r = 0; r < runs_.size(); ++r) pos_[r] = upper_bound(*runs_[r], cmp_, target) - 1;
    forward_ = false;
    pick_largest();
  }

  void SeekToFirst() override {
    std::fill(pos_.begin(), pos_.end(), 0);
    forward_ = true;
    pick_smallest();
  }

  void SeekToLast() override {
    for (std::size_t r = 0; r < runs_.size(); ++r) pos_[r] = static_cast<std::ptrdiff_t>(runs_[r]->size()) - 1;
    forward_ = false;
    pick_largest();
  }

 private:
  bool in_range(std::size_t r) const {
    return pos_[r] >= 0 && static_cast<std::size_t>(pos_[r]) < runs_[r]->size();
  }
  Entry at(std::ptrdiff_t r) const {
    return (*runs_[static_cast<std::size_t>(r)])[static_cast<std::size_t>(pos_[static_cast<std::size_t>(r)])];
  }

  void pick_smallest() {
    current_ = -1;
    for (std::size_t r = 0; r < runs_.size(); ++r) {
      if (in_range(r) && (current_ < 0 || cmp_(at(static_cast<std::ptrdiff_t>(r)), at(current_)) < 0)) {
        current_ = static_cast<std::ptrdiff_t>(r);
      }
    }
  }

  void pick_largest() {
    current_ = -1;
    for (std::size_t r = 0; r < runs_.size(); ++r) {
      if (in_range(r) && (current_ < 0 || cmp_(at(static_cast<std::ptrdiff_t>(r)), at(current_)) > 0)) {
        current_ = static_cast<std::ptrdiff_t>(r);
      }
    }
  }

  const EntryCompare cmp_;
  const std::vector<RunPtr> runs_;
  // Going forward: each run's first entry not before the current one
  // (size() when none). Going backward: its last entry not after it (-1).
  std::vector<std::ptrdiff_t> pos_;
  std::ptrdiff_t current_ = -1;  // the run holding the current entry
  bool forward_ = true;
};

class SortedRunsRep final : public rocksdb::MemTableRep {
 public:
  SortedRunsRep(const KeyComparator& cmp, bool bytewise, rocksdb::Allocator* allocator, std::size_t tail_entries)
      : rocksdb::MemTableRep(allocator), cmp_(cmp, bytewise), tail_entries_(std::max<std::size_t>(tail_entries, 1)) {
    tail_.reserve(tail_entries_);
    account();
  }

  void Insert(rocksdb::KeyHandle handle) override {
    auto entry = static_cast<Entry>(handle);
    std::lock_guard<std::mutex> writer(insert_mu_);
    // Only writers change tail_, and they hold insert_mu_: reading it here
    // needs no mu_.
    auto at = std::upper_bound(tail_.begin(), tail_.end(), entry, [&](Entry a, Entry b) { return cmp_(a, b) < 0; });
    {
      std::lock_guard<std::mutex> l(mu_);
      tail_.insert(at, entry);
    }
    if (tail_.size() >= tail_entries_) seal_tail();
  }

  void InsertConcurrently(rocksdb::KeyHandle handle) override { Insert(handle); }

  bool Contains(const char* key) const override {
    rocksdb::Slice target = rocksdb::GetLengthPrefixedSlice(key);
    for (const RunPtr& run : view()) {
      std::ptrdiff_t i = lower_bound(*run, cmp_, target);
      if (static_cast<std::size_t>(i) < run->size() && cmp_((*run)[static_cast<std::size_t>(i)], target) == 0) {
        return true;
      }
    }
    return false;
  }

  // Exact: the entries from start_ikey up to end_ikey (internal keys).
  std::uint64_t ApproximateNumEntries(const rocksdb::Slice& start_ikey, const rocksdb::Slice& end_ikey) override {
    std::uint64_t n = 0;
    for (const RunPtr& run : view()) {
      std::ptrdiff_t from = lower_bound(*run, cmp_, start_ikey);
      std::ptrdiff_t to = lower_bound(*run, cmp_, end_ikey);
      if (to > from) n += static_cast<std::uint64_t>(to - from);
    }
    return n;
  }

  // The entries from k on, newest version of its user key first, until
  // callback_func declines one (RocksDB stops at another user key).
  void Get(const rocksdb::LookupKey& k, void* callback_args,
           bool (*callback_func)(void* arg, const char* entry)) override {
    MergedIterator it(cmp_, view());
    it.Seek(lookup_internal_key(k), nullptr);
    while (it.Valid() && callback_func(callback_args, it.key())) it.Next();
  }

  std::size_t ApproximateMemoryUsage() override { return memory_.load(std::memory_order_relaxed); }

  Iterator* GetIterator(rocksdb::Arena* arena) override {
    std::vector<RunPtr> runs = view();
    if (arena == nullptr) return new MergedIterator(cmp_, std::move(runs));
    void* mem = arena->AllocateAligned(sizeof(MergedIterator), 0, nullptr);
    return new (mem) MergedIterator(cmp_, std::move(runs));
  }

 private:
  // What a reader sees now: the runs and a copy of the tail.
  std::vector<RunPtr> view() const {
    std::vector<RunPtr> runs;
    std::lock_guard<std::mutex> l(mu_);
    runs.reserve(runs_.size() + 1);
    runs = runs_;
    if (!tail_.empty()) runs.push_back(std::make_shared<const Run>(tail_));
    return runs;
  }

  // The full tail becomes a run, merged with every newer run not larger
  // than it. Runs are immutable: the merge runs outside mu_, while readers
  // still see the tail and the old runs, and is published in one step.
  // Requires insert_mu_.
  void seal_tail() {
    RunPtr merged = std::make_shared<const Run>(tail_);
    std::size_t keep = runs_.size();
    while (keep > 0 && runs_[keep - 1]->size() <= merged->size()) {
      merged = merge_runs(*runs_[keep - 1], *merged, cmp_);
      --keep;
    }
    {
      std::lock_guard<std::mutex> l(mu_);
      runs_.resize(keep);
      runs_.push_back(std::move(merged));
      tail_.clear();
    }
    account();
  }

  // Requires insert_mu_ (or the constructor).
  void account() {
    std::size_t entries = tail_.capacity();
    for (const RunPtr& run : runs_) entries += run->capacity();
    memory_.store(sizeof(*this) + entries * sizeof(Entry), std::memory_order_relaxed);
  }

  const EntryCompare cmp_;
  const std::size_t tail_entries_;
  std::mutex insert_mu_;   // serialises writers (RocksDB's concurrent memtable writes)
  mutable std::mutex mu_;  // guards tail_ and runs_ against readers
  Run tail_;                // sorted, fewer than tail_entries_ entries
  std::vector<RunPtr> runs_;  // older and larger runs first
  std::atomic<std::size_t> memory_{0};
};

}  // namespace

SortedRunsRepFactory::SortedRunsRepFactory(std::size_t tail_entries, const rocksdb::Comparator* user_comparator)
    : tail_entries_(tail_entries), bytewise_(user_comparator == rocksdb::BytewiseComparator()) {}

rocksdb::MemTableRep* SortedRunsRepFactory::CreateMemTableRep(const rocksdb::MemTableRep::KeyComparator& compare,
                                                              rocksdb::Allocator* allocator,
                                                              const rocksdb::SliceTransform*, rocksdb::Logger*) {
  return new SortedRunsRep(compare, bytewise_, allocator, tail_entries_);
}

}  // namespace zstore::storage
