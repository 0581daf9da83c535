// Sorted runs of memtable entries (sorted_runs.h): comparison, merge and
// the merged iterator.
#include "storage/db/sorted_runs.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace zstore::storage::sorted_runs {
namespace {

// How far ahead a merge or an iteration asks for the entries it will
// compare next: entries lie at random places in the memtable's arena.
constexpr std::ptrdiff_t kPrefetchAhead = 8;
// A merge compares keys (an entry's first cache line); an iteration (a
// flush) reads the entry's key and value too: an entry of a 16-byte CHP
// key and a 100-byte value spans three lines or four.
constexpr int kMergeLines = 1;
constexpr int kIterationLines = 3;

// Asks for the first `lines` cache lines of run[i], if there is one.
// Always inlined: GCC finds a function that only prefetches free of side
// effects and deletes the calls to it.
[[gnu::always_inline]] inline void prefetch(const Run& run, std::ptrdiff_t i, int lines) {
  if (i < 0 || static_cast<std::size_t>(i) >= run.size()) return;
  const char* entry = run[static_cast<std::size_t>(i)];
  for (int line = 0; line < lines; ++line) __builtin_prefetch(entry + 64 * line);
}

// The internal key a Seek targets: RocksDB passes the length-prefixed
// memtable key when it has one, else only the internal key.
rocksdb::Slice seek_target(const rocksdb::Slice& internal_key, const char* memtable_key) {
  return memtable_key != nullptr ? rocksdb::GetLengthPrefixedSlice(memtable_key) : internal_key;
}

}  // namespace

std::ptrdiff_t lower_bound(const Run& run, const EntryCompare& cmp, const rocksdb::Slice& target) {
  auto at = std::partition_point(run.begin(), run.end(), [&](Entry e) { return cmp(e, target) < 0; });
  return at - run.begin();
}

std::ptrdiff_t upper_bound(const Run& run, const EntryCompare& cmp, const rocksdb::Slice& target) {
  auto at = std::partition_point(run.begin(), run.end(), [&](Entry e) { return cmp(e, target) <= 0; });
  return at - run.begin();
}

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

MergedIterator::MergedIterator(StorageRelease::Release release, void* owner, void* storage, const EntryCompare& cmp,
                               std::vector<RunPtr> runs)
    : StorageRelease(release, owner, storage), cmp_(cmp), runs_(std::move(runs)), pos_(runs_.size(), 0) {}

void MergedIterator::Next() {
  if (!forward_) {
    // Each other run is at its last entry before the current one.
    for (std::size_t r = 0; r < runs_.size(); ++r) {
      if (static_cast<std::ptrdiff_t>(r) != current_) ++pos_[r];
    }
    forward_ = true;
  }
  prefetch(*runs_[static_cast<std::size_t>(current_)], ++pos_[static_cast<std::size_t>(current_)] + kPrefetchAhead,
           kIterationLines);
  pick(-1);
}

void MergedIterator::Prev() {
  if (forward_) {
    // Each other run is at its first entry after the current one.
    for (std::size_t r = 0; r < runs_.size(); ++r) {
      if (static_cast<std::ptrdiff_t>(r) != current_) --pos_[r];
    }
    forward_ = false;
  }
  prefetch(*runs_[static_cast<std::size_t>(current_)], --pos_[static_cast<std::size_t>(current_)] - kPrefetchAhead,
           kIterationLines);
  pick(+1);
}

void MergedIterator::Seek(const rocksdb::Slice& internal_key, const char* memtable_key) {
  rocksdb::Slice target = seek_target(internal_key, memtable_key);
  for (std::size_t r = 0; r < runs_.size(); ++r) pos_[r] = lower_bound(*runs_[r], cmp_, target);
  forward_ = true;
  pick(-1);
}

void MergedIterator::SeekForPrev(const rocksdb::Slice& internal_key, const char* memtable_key) {
  rocksdb::Slice target = seek_target(internal_key, memtable_key);
  for (std::size_t r = 0; r < runs_.size(); ++r) pos_[r] = upper_bound(*runs_[r], cmp_, target) - 1;
  forward_ = false;
  pick(+1);
}

void MergedIterator::SeekToFirst() {
  std::fill(pos_.begin(), pos_.end(), 0);
  forward_ = true;
  pick(-1);
}

void MergedIterator::SeekToLast() {
  for (std::size_t r = 0; r < runs_.size(); ++r) pos_[r] = static_cast<std::ptrdiff_t>(runs_[r]->size()) - 1;
  forward_ = false;
  pick(+1);
}

// The run whose entry is first in `direction` (-1: the smallest, +1: the
// largest) among those still in range; -1 when none is.
void MergedIterator::pick(int direction) {
  current_ = -1;
  for (std::size_t r = 0; r < runs_.size(); ++r) {
    if (!in_range(r)) continue;
    if (current_ >= 0) {
      int c = cmp_(at(static_cast<std::ptrdiff_t>(r)), at(current_));
      if (direction < 0 ? c >= 0 : c <= 0) continue;
    }
    current_ = static_cast<std::ptrdiff_t>(r);
  }
}

}  // namespace zstore::storage::sorted_runs
